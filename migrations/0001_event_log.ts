import { type Kysely, sql } from 'kysely';

// The append-only log. Positions are assigned under a transaction-level advisory lock, so commit
// order equals position order and a reader following `position > cursor` can never skip a row.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('position', 'bigint', (c) => c.primaryKey())
    .addColumn('event_id', 'uuid', (c) => c.notNull().unique())
    .addColumn('stream_id', 'text', (c) => c.notNull())
    .addColumn('stream_version', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('schema_version', 'integer', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('events_stream_version_unique', ['stream_id', 'stream_version'])
    .execute();
  await db.schema.createIndex('events_type_idx').on('events').columns(['type', 'position']).execute();

  await sql`
    CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the events table is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only()`.execute(db);
  await sql`
    CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()`.execute(db);

  await db.schema
    .createTable('checkpoints')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  // Identifiers handed to commands; the log records them, so replay never consults these.
  for (const name of ['realm_id_seq', 'user_id_seq', 'user_group_id_seq', 'stream_id_seq', 'message_id_seq',
    'draft_id_seq', 'linkifier_id_seq', 'playground_id_seq', 'attachment_id_seq', 'profile_field_id_seq',
    'recipient_id_seq', 'emoji_id_seq']) {
    await sql`CREATE SEQUENCE ${sql.id(name)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('checkpoints').execute();
  await sql`DROP TABLE events`.execute(db);
  await sql`DROP FUNCTION events_append_only`.execute(db);
}
