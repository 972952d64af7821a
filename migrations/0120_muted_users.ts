import type { Kysely } from 'kysely';

// Users each user has muted; the index answers "who muted this sender" on the send path.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('muted_users')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('muted_user_id', 'integer', (c) => c.notNull())
    .addColumn('date_muted', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('muted_users_pkey', ['user_id', 'muted_user_id'])
    .execute();
  await db.schema.createIndex('muted_users_muted_idx').on('muted_users').columns(['muted_user_id', 'user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('muted_users').execute();
}
