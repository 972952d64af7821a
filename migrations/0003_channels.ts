import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('streams')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('rendered_description', 'text', (c) => c.notNull())
    .addColumn('invite_only', 'boolean', (c) => c.notNull())
    .addColumn('is_web_public', 'boolean', (c) => c.notNull())
    .addColumn('history_public_to_subscribers', 'boolean', (c) => c.notNull())
    .addColumn('stream_post_policy', 'integer', (c) => c.notNull())
    .addColumn('message_retention_days', 'integer')
    .addColumn('can_remove_subscribers_group', 'integer', (c) => c.notNull())
    .addColumn('creator_id', 'integer')
    .addColumn('date_created', 'bigint', (c) => c.notNull())
    .addColumn('first_message_id', 'integer')
    .addColumn('is_default', 'boolean', (c) => c.notNull())
    .addColumn('deactivated', 'boolean', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX streams_name_idx ON streams (realm_id, lower(name)) WHERE NOT deactivated`.execute(db);

  await db.schema
    .createTable('subscriptions')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('stream_id', 'integer', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('is_muted', 'boolean', (c) => c.notNull())
    .addColumn('pin_to_top', 'boolean', (c) => c.notNull())
    .addColumn('desktop_notifications', 'boolean')
    .addColumn('email_notifications', 'boolean')
    .addColumn('push_notifications', 'boolean')
    .addColumn('audible_notifications', 'boolean')
    .addColumn('wildcard_mentions_notify', 'boolean')
    .addPrimaryKeyConstraint('subscriptions_pk', ['user_id', 'stream_id'])
    .execute();
  await db.schema.createIndex('subscriptions_stream_idx').on('subscriptions').columns(['stream_id', 'active']).execute();

  await db.schema
    .createTable('user_topics')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('stream_id', 'integer', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('visibility_policy', 'integer', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_topics_pk', ['user_id', 'stream_id', 'topic'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['user_topics', 'subscriptions', 'streams']) await db.schema.dropTable(table).execute();
}
