import type { Trx } from '../src/projections-api.js';
import type { DataOf } from '../src/domain/events.js';
import { defineProjection, type HandlerResult } from './define.js';

type Job = { message_id: number; bot_id: number; realm_id: number; trigger: string };

const jobsOf = (d: DataOf<'MessageSent'>): Job[] =>
  (d.outgoing_webhooks ?? []).map((t) => ({ message_id: d.message_id, bot_id: t.bot_id, realm_id: d.realm_id, trigger: t.trigger }));

async function insertJobs(trx: Trx, jobs: Job[]): Promise<HandlerResult> {
  // Most messages trigger no bot: the table (and caches keyed on it) stay as they were.
  if (jobs.length === 0) return 'unchanged';
  await trx.insertInto('outgoing_webhook_jobs').values(jobs).onConflict((oc) => oc.columns(['message_id', 'bot_id']).doNothing()).execute();
}

/**
 * The triggers of outgoing webhook bots not yet answered: a MessageSent names the bots it
 * triggers, an OutgoingWebhookCompleted ends one (src/services/outgoing-webhooks/worker.ts).
 */
export const outgoingWebhookJobsProjection = defineProjection({
  name: 'outgoing-webhook-jobs',
  version: 1,
  tables: ['outgoing_webhook_jobs'],
  handlers: {
    MessageSent: (trx, d) => insertJobs(trx, jobsOf(d)),
    OutgoingWebhookCompleted: async (trx, d) => {
      await trx.deleteFrom('outgoing_webhook_jobs').where('message_id', '=', d.message_id).where('bot_id', '=', d.bot_id).execute();
    },
  },
  bulk: { MessageSent: (trx, run) => insertJobs(trx, run.flatMap((e) => jobsOf(e.data))) },
  // A completion touches only its message's row: later sends (higher ids) may fold before it.
  messagesTouched: { OutgoingWebhookCompleted: (d) => d.message_id },
});
