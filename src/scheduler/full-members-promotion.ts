import { systemMeta } from '../services/forgetting.js';
import { syncFullMembers } from '../services/full-members.js';
import type { ServiceContext } from '../services/context.js';
import { PeriodicPass } from './periodic-pass.js';

/** A minute after start: a restart neither skips a pass for long nor runs one in the middle of starting. */
const FIRST_PASS_DELAY_MS = 60_000;

export interface PromotionResult {
  added: number;
  removed: number;
}

/**
 * Promotes members to role:fullmembers once their waiting period has passed (the real server's
 * daily promote_new_full_members cron job; account creation, role changes and changes of the
 * threshold move people at once, this catches the passing of time). Every server process runs one
 * and needs no election: each organization's pass is one append to its group stream at the version
 * it read, so when two processes pass together one appends and the other conflicts, decides again
 * on the new membership and finds nothing left to do.
 */
export class FullMembersPromotion {
  private readonly passes = new PeriodicPass(() => this.runOnce());

  constructor(
    private readonly ctx: ServiceContext,
    private readonly options: { now?: () => Date; onError?: (error: unknown, realmId: number) => void } = {},
  ) {}

  /** One pass a minute after start, then every `intervalSeconds` (0: never on its own). */
  start(intervalSeconds: number): void {
    if (intervalSeconds <= 0) return;
    this.passes.start(Math.min(FIRST_PASS_DELAY_MS, intervalSeconds * 1000), intervalSeconds * 1000);
  }

  /** Stops passing and waits for a pass in progress to finish. */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass over every active organization at `now`; an organization that fails is tried again next pass. */
  async runOnce(now: Date = this.options.now?.() ?? new Date()): Promise<PromotionResult> {
    const result: PromotionResult = { added: 0, removed: 0 };
    const realms = await this.ctx.db.selectFrom('realms').select('id').where('deactivated', '=', false).orderBy('id').execute();
    for (const realm of realms) {
      try {
        const changed = await syncFullMembers(this.ctx, systemMeta(realm.id, 'internal: promote new full members', now));
        result.added += changed.added;
        result.removed += changed.removed;
      } catch (error) {
        this.options.onError?.(error, realm.id);
      }
    }
    return result;
  }
}
