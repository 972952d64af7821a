import { sql, type Kysely } from 'kysely';

// Email invitations: one row per invitation; accepted ones stay (with the account they created).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE IF NOT EXISTS invite_id_seq`.execute(db);
  await db.schema
    .createTable('invites')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('invited_by_user_id', 'integer', (c) => c.notNull())
    .addColumn('invited_as', 'integer', (c) => c.notNull())
    .addColumn('stream_ids', 'jsonb', (c) => c.notNull())
    .addColumn('invited', 'bigint', (c) => c.notNull())
    .addColumn('expiry_date', 'bigint')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('accepted_user_id', 'integer')
    .execute();
  await db.schema.createIndex('invites_realm_idx').on('invites').columns(['realm_id', 'invited_by_user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invites').execute();
  await sql`DROP SEQUENCE IF EXISTS invite_id_seq`.execute(db);
}
