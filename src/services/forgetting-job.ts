import { runOnOneReplica } from './replica-lock.js';
import type { ServiceContext } from './context.js';
import { forgettingStats, shredDueDeletions } from './forgetting.js';
import { applyRetention } from './retention.js';
import { sweepEndedKeys } from './ended-keys.js';
import { pruneStoredExportKeys } from './realm-exports.js';

/** Held by the replica that runs the job; the others skip their turn. */
export const FORGETTING_LOCK_KEY = 7_340_140;

/**
 * The background work of forgetting: deleted messages past their grace period and messages past
 * their retention period are shredded. Runs at start (catching up on any downtime: it shreds
 * everything due, however old) and then every `intervalSeconds`, on one replica at a time.
 */
export class ForgettingJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  lastError: unknown;

  constructor(
    private readonly ctx: ServiceContext,
    /** true when this process is the database's only user (the embedded database): no lock needed. */
    private readonly sole: boolean,
  ) {}

  start(intervalSeconds: number): void {
    if (intervalSeconds <= 0) return;
    const tick = () => {
      if (this.stopped) return;
      void this.runOnce().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, intervalSeconds * 1000).unref();
      });
    };
    this.timer = setTimeout(tick, 1_000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass; resolves false when another replica holds the job. */
  runOnce(now = new Date()): Promise<boolean> {
    const run = runOnOneReplica(this.ctx.db, this.sole, FORGETTING_LOCK_KEY, () => this.pass(now)).then(
      (outcome) => outcome.ran && outcome.value,
      (error: unknown) => {
        this.lastError = error;
        return false;
      },
    );
    this.running = run.then(() => undefined);
    return run;
  }

  private async pass(now: Date): Promise<boolean> {
    const started = Date.now();
    const realms = await this.ctx.db.selectFrom('realms').selectAll().execute();
    for (const realm of realms) {
      await shredDueDeletions(this.ctx, realm, now, this.ctx.config.deletedMessageShredDays);
      await applyRetention(this.ctx, realm, now);
    }
    // Safety nets for a crash between an event and the key destruction that follows it.
    await sweepEndedKeys(this.ctx.db);
    await pruneStoredExportKeys(this.ctx);
    forgettingStats.retentionRuns += 1;
    forgettingStats.lastRetentionRunSeconds = Math.floor(now.getTime() / 1000);
    forgettingStats.lastRetentionDurationSeconds = (Date.now() - started) / 1000;
    return true;
  }
}
