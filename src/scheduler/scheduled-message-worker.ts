import { dueScheduledMessageIds } from '../read/scheduled-messages.js';
import { deliverScheduledMessage } from '../services/scheduled-messages.js';
import type { ServiceContext } from '../services/context.js';
import { PeriodicPass } from './periodic-pass.js';

const BATCH = 100;

export interface SchedulerOptions {
  /** How often to look for due messages. */
  intervalMs?: number;
  /** The clock (tests move it). */
  now?: () => Date;
  onError?: (error: unknown, scheduledMessageId: number | null) => void;
}

export interface TickResult {
  delivered: number;
  failed: number;
}

/**
 * Sends scheduled messages when they are due. Every server process runs one; they need no
 * election: each delivery is one append that expects the scheduled message's stream version (see
 * deliverScheduledMessage), so when two processes reach the same message one appends and the
 * other conflicts and finds it delivered. The first tick after a start catches up on messages that
 * came due while the server was down (up to the late cutoff; older ones fail, as on the real server).
 */
export class ScheduledMessageWorker {
  private readonly passes: PeriodicPass = new PeriodicPass((): Promise<unknown> =>
    this.runOnce(this.now(), () => this.passes.active).catch((error) => this.options.onError?.(error, null)),
  );
  private readonly intervalMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly options: SchedulerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.passes.start(0, this.intervalMs);
  }

  /** Stops ticking and waits for a delivery in progress to finish. */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** Delivers every message due at `now`; returns what it did. */
  async runOnce(now: Date = this.now(), keepGoing: () => boolean = () => true): Promise<TickResult> {
    const result: TickResult = { delivered: 0, failed: 0 };
    const tried = new Set<number>();
    for (;;) {
      const ids = (await dueScheduledMessageIds(this.ctx.db, Math.floor(now.getTime() / 1000), BATCH + tried.size)).filter((id) => !tried.has(id));
      if (ids.length === 0) return result;
      for (const id of ids) {
        if (!keepGoing()) return result;
        tried.add(id);
        try {
          const outcome = await deliverScheduledMessage(this.ctx, id, now);
          if (outcome === 'delivered') result.delivered += 1;
          else if (outcome === 'failed') result.failed += 1;
        } catch (error) {
          // Left as it was: the next tick tries again.
          this.options.onError?.(error, id);
        }
      }
    }
  }
}
