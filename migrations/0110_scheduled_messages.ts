import { sql, type Kysely } from 'kysely';

// Scheduled messages (send later). Delivered ones stay, marked delivered, so a late edit is told
// "already sent"; a deletion removes the row.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE IF NOT EXISTS scheduled_message_id_seq`.execute(db);
  await db.schema
    .createTable('scheduled_messages')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('stream_id', 'integer')
    .addColumn('to', 'jsonb', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('rendered_content', 'text', (c) => c.notNull())
    .addColumn('scheduled_timestamp', 'bigint', (c) => c.notNull())
    .addColumn('read_by_sender', 'boolean', (c) => c.notNull())
    .addColumn('client', 'text', (c) => c.notNull())
    .addColumn('failed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('failure_message', 'text')
    .addColumn('delivered', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('delivered_message_id', 'bigint')
    // stream_version of the message's last event (optimistic concurrency of edits and delivery)
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('scheduled_messages_sender_idx').on('scheduled_messages').columns(['sender_id', 'scheduled_timestamp']).execute();
  // What the delivery job scans: only messages still waiting.
  await sql`CREATE INDEX scheduled_messages_due_idx ON scheduled_messages (scheduled_timestamp) WHERE NOT delivered AND NOT failed`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('scheduled_messages').execute();
  await sql`DROP SEQUENCE IF EXISTS scheduled_message_id_seq`.execute(db);
}
