import { sql, type Kysely } from 'kysely';

// Submessages (widgets and their votes, options, tasks), folded from MessageSent's widget and
// SubmessageAdded; removed with their message (deletion, shredding).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE IF NOT EXISTS submessage_id_seq`.execute(db);
  await db.schema
    .createTable('submessages')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('msg_type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('submessages_message_idx').on('submessages').columns(['message_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('submessages').execute();
  await sql`DROP SEQUENCE IF EXISTS submessage_id_seq`.execute(db);
}
