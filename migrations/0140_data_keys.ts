import { sql, type Kysely } from 'kysely';

// Crypto-shredding (docs/FORGETTING.md): data keys wrapped by the key-encryption key, the KEK's
// check value, and the deleted messages waiting for their grace period to end.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('data_keys')
    .addColumn('key_id', 'text', (c) => c.primaryKey())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('format', 'integer', (c) => c.notNull())
    .addColumn('wrapped', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('data_key_check')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('format', 'integer', (c) => c.notNull())
    .addColumn('check_value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('pending_shreds')
    .addColumn('message_id', 'int8', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('stream_id', 'integer')
    .addColumn('deleted_at', 'int8', (c) => c.notNull())
    .execute();
  // Channels and people whose data nothing may shred while the hold lasts.
  await db.schema
    .createTable('legal_holds')
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('since', 'int8', (c) => c.notNull())
    .addPrimaryKeyConstraint('legal_holds_pkey', ['realm_id', 'scope', 'subject_id'])
    .execute();
  await db.schema.createIndex('pending_shreds_deleted_at_idx').on('pending_shreds').column('deleted_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('legal_holds').execute();
  await db.schema.dropTable('pending_shreds').execute();
  await db.schema.dropTable('data_key_check').execute();
  await db.schema.dropTable('data_keys').execute();
}
