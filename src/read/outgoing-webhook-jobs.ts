import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { OutgoingWebhookJobsTable } from '../db/schema/outgoing-webhooks.js';

export type OutgoingWebhookJob = Selectable<OutgoingWebhookJobsTable>;

/** Triggers not yet answered, oldest message first. */
export async function pendingOutgoingWebhookJobs(db: Db, limit: number): Promise<OutgoingWebhookJob[]> {
  return db.selectFrom('outgoing_webhook_jobs').selectAll().orderBy('message_id').orderBy('bot_id').limit(limit).execute();
}

export async function outgoingWebhookJobPending(db: Db, messageId: number, botId: number): Promise<boolean> {
  const row = await db.selectFrom('outgoing_webhook_jobs').select('bot_id').where('message_id', '=', messageId).where('bot_id', '=', botId).executeTakeFirst();
  return row !== undefined;
}
