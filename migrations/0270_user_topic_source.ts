import type { Kysely } from 'kysely';

// The message whose key seals a topic preference's topic (one a send or a move set): the row is
// forgotten with that message. Null: the user set it (the projection refolds).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('user_topics').addColumn('message_id', 'integer').execute();
  // Deleting or forgetting a message looks up the preferences it sealed.
  await db.schema.createIndex('user_topics_message_idx').on('user_topics').column('message_id').where('message_id', 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('user_topics_message_idx').execute();
  await db.schema.alterTable('user_topics').dropColumn('message_id').execute();
}
