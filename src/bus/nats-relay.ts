import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Bus } from './bus.js';

export const RELAY_LOCK_KEY = 7_340_003;
const BATCH = 500;

/**
 * The log is the outbox: this relay publishes committed events to JetStream from where the
 * JetStream stream itself says it stopped, so a crash between commit and publish loses nothing and
 * nothing reaches subscribers twice (Nats-Msg-Id = event_id backs this up). One process at a time
 * relays (advisory lock); NATS being down only delays it.
 */
export class NatsRelay {
  private running: Promise<void> | undefined;
  /** Another drain is owed: 'always' (head unknown) or only if the last one stopped short of `knownHead`. */
  private again: 'none' | 'ifBehind' | 'always' = 'none';
  private knownHead = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  relayedPosition = 0;

  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly bus: Bus,
  ) {}

  /** `head`: the log position the caller knows exists; nothing to do if it is already relayed. */
  kick(head?: number): void {
    if (this.stopped) return;
    if (head !== undefined) {
      if (head <= this.relayedPosition) return;
      this.knownHead = Math.max(this.knownHead, head);
    }
    if (this.running) {
      this.again = head === undefined || this.again === 'always' ? 'always' : 'ifBehind';
      return;
    }
    this.running = this.drain()
      .catch(() => this.scheduleRetry())
      .finally(() => {
        this.running = undefined;
        const again = this.again;
        this.again = 'none';
        if (again === 'always') this.kick();
        else if (again === 'ifBehind') this.kick(this.knownHead);
      });
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, 1_000);
    this.retryTimer.unref();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const published = await this.db.connection().execute(async (conn) => {
        const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${RELAY_LOCK_KEY}) AS locked`.execute(conn);
        if (!rows[0]!.locked) return -1;
        try {
          const from = (await this.bus.lastPublishedPosition()) ?? 0;
          const events = await this.store.readAll(from, BATCH);
          await this.bus.publishEvents(events);
          if (events.length > 0) this.relayedPosition = events[events.length - 1]!.position;
          else this.relayedPosition = from;
          return events.length;
        } finally {
          await sql`SELECT pg_advisory_unlock(${RELAY_LOCK_KEY})`.execute(conn);
        }
      });
      if (published === -1) {
        // Another process relays; check again later in case it dies.
        this.scheduleRetry();
        return;
      }
      if (published < BATCH) return;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}
