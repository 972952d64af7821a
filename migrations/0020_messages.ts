import { type Kysely, sql } from 'kysely';

// Messages and the sparse per-user message state (see docs/MESSAGE-STATE.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('messages')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('stream_id', 'integer')
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('date_sent', 'bigint', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('rendered_content', 'text', (c) => c.notNull())
    .addColumn('recipient_id', 'integer', (c) => c.notNull())
    // Sorted participant ids ("3,7,9") of a direct message; null for channel messages.
    .addColumn('dm_key', 'text')
    .addColumn('client', 'text', (c) => c.notNull())
    .addColumn('is_me_message', 'boolean', (c) => c.notNull())
    .addColumn('has_link', 'boolean', (c) => c.notNull())
    .addColumn('has_image', 'boolean', (c) => c.notNull())
    .addColumn('has_attachment', 'boolean', (c) => c.notNull())
    .addColumn('stream_wildcard', 'boolean', (c) => c.notNull())
    .addColumn('topic_wildcard', 'boolean', (c) => c.notNull())
    .addColumn('last_edit_timestamp', 'bigint')
    .addColumn('edit_history', 'jsonb')
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await sql`ALTER TABLE messages ADD COLUMN search_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', topic || ' ' || content)) STORED`.execute(db);
  await sql`CREATE INDEX messages_search_idx ON messages USING gin (search_tsv)`.execute(db);
  await sql`CREATE INDEX messages_stream_topic_idx ON messages (stream_id, lower(topic), id)`.execute(db);
  await sql`CREATE INDEX messages_stream_idx ON messages (stream_id, id)`.execute(db);
  await sql`CREATE INDEX messages_sender_idx ON messages (sender_id, id)`.execute(db);
  await sql`CREATE INDEX messages_dm_idx ON messages (realm_id, dm_key, id) WHERE dm_key IS NOT NULL`.execute(db);
  await sql`CREATE INDEX messages_realm_idx ON messages (realm_id, id)`.execute(db);

  // Recipient ids: one per channel, per 1:1 conversation partner, per group conversation.
  await db.schema
    .createTable('message_recipients')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .execute();

  // Participants of direct messages (sender included): few per message, read "my DMs, newest first".
  await db.schema
    .createTable('message_dm_recipients')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_dm_recipients_pk', ['user_id', 'message_id'])
    .execute();
  await db.schema.createIndex('message_dm_recipients_msg_idx').on('message_dm_recipients').column('message_id').execute();

  // When a user received a channel's messages: one row per subscription period, not per message.
  await db.schema
    .createTable('message_reception_spans')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('stream_id', 'integer', (c) => c.notNull())
    .addColumn('from_id', 'integer', (c) => c.notNull())
    .addColumn('to_id', 'integer')
    .execute();
  await db.schema.createIndex('message_reception_spans_user_idx').on('message_reception_spans').columns(['user_id', 'stream_id']).execute();
  await db.schema.createIndex('message_reception_spans_stream_idx').on('message_reception_spans').columns(['stream_id', 'from_id']).execute();

  // Exceptions only: a row exists when a user's flags for a message differ from what the
  // watermark and the message's own columns imply (bits in src/domain/messages/flags.ts).
  await db.schema
    .createTable('message_flags')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('flags', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_flags_pk', ['user_id', 'message_id'])
    .execute();
  await db.schema.createIndex('message_flags_msg_idx').on('message_flags').column('message_id').execute();

  // Every received message with an id at or below read_through is read unless flagged unread.
  await db.schema
    .createTable('message_read_state')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('read_through', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('reactions')
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('emoji_name', 'text', (c) => c.notNull())
    .addColumn('emoji_code', 'text', (c) => c.notNull())
    .addColumn('reaction_type', 'text', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('reactions_pk', ['message_id', 'user_id', 'reaction_type', 'emoji_code'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['reactions', 'message_read_state', 'message_flags', 'message_reception_spans', 'message_dm_recipients', 'message_recipients', 'messages']) {
    await db.schema.dropTable(table).execute();
  }
}
