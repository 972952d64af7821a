import type { Kysely } from 'kysely';

/*
 * Outgoing webhook bots: each bot's service (where its webhook posts, in which format, and the
 * token it sends), folded from UserCreated and BotServiceUpdated; and the messages that triggered
 * a bot and are not yet answered (a MessageSent names them, OutgoingWebhookCompleted ends them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bot_services')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('interface', 'integer', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('outgoing_webhook_jobs')
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('bot_id', 'integer', (c) => c.notNull())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('outgoing_webhook_jobs_pk', ['message_id', 'bot_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outgoing_webhook_jobs').execute();
  await db.schema.dropTable('bot_services').execute();
}
