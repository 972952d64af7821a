import type { Kysely } from 'kysely';

// Read tables of drafts, code playgrounds, attachments and push device tokens. Linkifiers and
// user groups live in 0002 and 0004.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('drafts')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('to', 'jsonb', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('drafts_user_idx').on('drafts').columns(['user_id', 'timestamp']).execute();

  await db.schema
    .createTable('playgrounds')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('pygments_language', 'text', (c) => c.notNull())
    .addColumn('url_template', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('attachments')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path_id', 'text', (c) => c.notNull().unique())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('create_time', 'bigint', (c) => c.notNull())
    // Set when deleting messages removed the file's last link (the cleanup job then deletes it).
    .addColumn('orphaned', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.createIndex('attachments_owner_idx').on('attachments').column('owner_id').execute();
  await db.schema
    .createTable('attachment_messages')
    .addColumn('attachment_id', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('date_sent', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_messages_pk', ['attachment_id', 'message_id'])
    .execute();
  await db.schema.createIndex('attachment_messages_message_idx').on('attachment_messages').column('message_id').execute();

  await db.schema
    .createTable('push_devices')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('appid', 'text', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('push_devices_pk', ['user_id', 'token'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['push_devices', 'attachment_messages', 'attachments', 'playgrounds', 'drafts']) {
    await db.schema.dropTable(table).execute();
  }
}
