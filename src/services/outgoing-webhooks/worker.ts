import type { ServiceContext } from '../context.js';
import { pendingOutgoingWebhookJobs } from '../../read/outgoing-webhook-jobs.js';
import { runOnOneReplica } from '../replica-lock.js';
import { completeWithoutMessages, deliverOutgoingWebhook, type DeliveryOptions, type Outcome } from './delivery.js';

/** Held by the replica that calls webhooks; the others skip their turn. */
export const OUTGOING_WEBHOOKS_LOCK_KEY = 7_340_150;
const BATCH = 50;
const TABLES = ['outgoing_webhook_jobs'] as const;

export interface OutgoingWebhookWorkerOptions {
  /** how often to look for triggers another process folded (this process's own folds kick it at once) */
  intervalMs?: number;
  /** one request's time limit; the real server's is 10 seconds */
  timeoutMs?: number;
  /** whether webhooks may post to private networks (loopback included); the real server's proxy refuses them */
  allowPrivateNetworks?: boolean;
  onError?: (error: unknown, job: { message_id: number; bot_id: number } | null) => void;
}

/**
 * Calls outgoing webhook bots about the messages that triggered them (the real server's
 * OutgoingWebhookWorker). The triggers are a read table (outgoing_webhook_jobs, folded from
 * MessageSent); one replica at a time works through them (the advisory lock of
 * runOnOneReplica, as the forgetting job), and each trigger ends with one append that only the
 * first delivery can make (deliverOutgoingWebhook): its answer is sent exactly once, even if a
 * crash makes the webhook be called again. Passes of one process never overlap.
 */
export class OutgoingWebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = false;
  /** the timer runs (start) */
  private running = false;
  /** stop() was called: passes end early, kicks do nothing */
  private closed = false;
  private seenVersion = -1;
  private readonly delivery: DeliveryOptions;

  constructor(
    private readonly ctx: ServiceContext,
    /** true when this process is the database's only user (the embedded database): no lock needed */
    private readonly sole: boolean,
    private readonly options: OutgoingWebhookWorkerOptions = {},
  ) {
    this.delivery = {
      timeoutMs: options.timeoutMs ?? 10_000,
      allowPrivateNetworks: options.allowPrivateNetworks ?? false,
      keepGoing: () => !this.closed,
    };
  }

  start(): void {
    if (this.running || this.closed) return;
    this.running = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  /** After a fold of this process: a pass if the triggers may have changed (no query otherwise). */
  kick(): void {
    if (!this.running || this.closed || this.queued) return;
    if (this.ctx.tablesVersion(TABLES) === this.seenVersion) return;
    void this.runOnce().catch(() => undefined);
  }

  /** Delivers every trigger pending now, after any pass already running; resolves with their outcomes. */
  runOnce(): Promise<Outcome[]> {
    this.queued = true;
    const pass = this.chain.then(() => {
      this.queued = false;
      return this.pass();
    });
    this.chain = pass.catch(() => undefined);
    return pass;
  }

  private async pass(): Promise<Outcome[]> {
    this.seenVersion = this.ctx.tablesVersion(TABLES);
    const outcome = await runOnOneReplica(this.ctx.db, this.sole, OUTGOING_WEBHOOKS_LOCK_KEY, async () => {
      const outcomes: Outcome[] = [];
      const tried = new Set<string>();
      for (;;) {
        const jobs = (await pendingOutgoingWebhookJobs(this.ctx.db, BATCH + tried.size)).filter((j) => !tried.has(`${j.message_id}:${j.bot_id}`));
        if (jobs.length === 0 || this.closed) return outcomes;
        for (const job of jobs) {
          if (this.closed) return outcomes;
          tried.add(`${job.message_id}:${job.bot_id}`);
          try {
            const outcome = await deliverOutgoingWebhook(this.ctx, job, this.delivery);
            if (outcome !== 'postponed') outcomes.push(outcome);
          } catch (error) {
            this.options.onError?.(error, job);
            // A trigger whose answer cannot be sent is ended rather than called again on every pass.
            outcomes.push(await completeWithoutMessages(this.ctx, job, 'failed', 0).catch(() => 'failed' as const));
          }
        }
      }
    });
    return outcome.ran ? outcome.value : [];
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runOnce().catch((error) => this.options.onError?.(error, null)).finally(() => this.schedule());
    }, this.options.intervalMs ?? 2_000);
    this.timer.unref?.();
  }
}
