import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Bus } from './bus.js';
import type { StoredEvent } from '../eventstore/types.js';

export const RELAY_LOCK_KEY = 7_340_003;
const BATCH = 500;
/**
 * A pass starts this long after the commit that asks for it, so the commits of that moment share
 * it: each pass costs a write to NATS and its answers whatever it carries, while nothing in the
 * server waits on JetStream (readers are woken by the wake-ups).
 */
export const RELAY_GATHER_MS = 50;
/** How often a relay that is not running asks for the lock again, and the one that is looks for missed events. */
const RETRY_MS = 1_000;

/** JetStream answered and refused the publish (an expected last message that is not the last, ...). */
export const isJetStreamRefusal = (error: unknown) => typeof error === 'object' && error !== null && 'api_error' in error && (error as { api_error?: unknown }).api_error !== undefined;

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
  /** Until then another process holds the relay lock (kicks wait for the retry timer). */
  private followingUntil = 0;
  /** While this process relays (several processes on PostgreSQL): the connection holding the relay lock. */
  private leadership: { conn: Db; release: () => void; ended: Promise<void> } | undefined;
  relayedPosition = 0;

  /**
   * `sole`: this process is the only one on its database (the embedded one, guarded by the data
   * directory lock), so no relay lock is needed, and none may be held: PGlite has one connection,
   * which a relay waiting on NATS must not keep from every request.
   */
  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly bus: Bus,
    private readonly sole = false,
  ) {}

  /** `head`: the log position the caller knows exists; nothing to do if it is already relayed. */
  kick(head?: number): void {
    if (this.stopped) return;
    // Another process holds the relay lock: the retry timer asks again.
    if (Date.now() < this.followingUntil) return;
    if (head !== undefined) {
      if (head <= this.relayedPosition) return;
      this.knownHead = Math.max(this.knownHead, head);
    }
    if (this.running) {
      this.again = head === undefined || this.again === 'always' ? 'always' : 'ifBehind';
      return;
    }
    this.running = new Promise((resolve) => setTimeout(resolve, RELAY_GATHER_MS).unref())
      .then(() => (this.stopped ? undefined : this.drain()))
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
      // The retry asks for the lock whatever a pass since decided (its own retry was this one).
      this.followingUntil = 0;
      this.kick();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const conn = this.sole ? this.db : await this.lead();
      if (conn === undefined) {
        // Another process relays; check again later in case it dies.
        this.followingUntil = Date.now() + RETRY_MS / 2;
        this.scheduleRetry();
        return;
      }
      let published: number;
      try {
        published = await this.relayBatch(conn);
      } catch (error) {
        // NATS may be out of reach from this process only: another one may relay meanwhile.
        await this.stepDown();
        throw error;
      }
      if (published < BATCH) {
        // The relay also looks every RETRY_MS, for events of other processes whose wake-up it missed.
        if (!this.sole) this.scheduleRetry();
        return;
      }
    }
  }

  /**
   * The connection holding the relay lock, taking it if no process holds it; undefined when another
   * does. The lock is kept between passes (a pass then costs no statement of its own) until a pass
   * fails, the connection is lost (the database then releases the lock), or stop(). Should this
   * process go on relaying after losing the lock unnoticed, nothing is stored twice or out of order:
   * each publish names its predecessor, and JetStream drops a repeated event id.
   */
  private async lead(): Promise<Db | undefined> {
    if (this.leadership) return this.leadership.conn;
    let taken!: (conn: Db | undefined) => void;
    const outcome = new Promise<Db | undefined>((resolve) => (taken = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ended = this.db.connection().execute(async (conn) => {
      const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${RELAY_LOCK_KEY}) AS locked`.execute(conn);
      if (!rows[0]!.locked) return taken(undefined);
      this.leadership = { conn, release, ended };
      taken(conn);
      await released;
      await sql`SELECT pg_advisory_unlock(${RELAY_LOCK_KEY})`.execute(conn);
    }).finally(() => {
      if (this.leadership?.release === release) this.leadership = undefined;
    });
    // Failing before the lock was taken fails this pass; failing to unlock loses nothing (the lock goes with its connection).
    return Promise.race([outcome, ended.then(() => outcome)]);
  }

  /** Gives up the relay lock (and its connection), if this process holds it. */
  async stepDown(): Promise<void> {
    const leadership = this.leadership;
    if (!leadership) return;
    this.leadership = undefined;
    leadership.release();
    await leadership.ended.catch(() => undefined);
  }

  /**
   * Publishes the next events after what JetStream holds; returns how many. What this process
   * committed comes from memory; anything else is read on `conn` (the connection holding the lock:
   * asking the pool for a second one could wait for ever on a single-connection database).
   * After a pass of its own, the relay continues from its own last publish without asking the
   * stream where it stands; JetStream refuses that publish if anything else reached the stream
   * since (another process's relay, a purge), and the pass then asks.
   */
  private async relayBatch(conn: Db): Promise<number> {
    const own = this.bus.ownLastPublished?.();
    if (own !== undefined && own >= this.relayedPosition) {
      const events = await this.store.readNextStored(own, BATCH, conn);
      if (events.length === 0) return 0;
      try {
        await this.bus.publishEvents(events, { continuing: true });
        return this.relayed(events, own);
      } catch (error) {
        if (!isJetStreamRefusal(error)) throw error;
      }
    }
    const from = (await this.bus.lastPublishedPosition()) ?? 0;
    const events = await this.store.readNextStored(from, BATCH, conn);
    await this.bus.publishEvents(events);
    return this.relayed(events, from);
  }

  private relayed(events: readonly StoredEvent[], from: number): number {
    this.relayedPosition = events.length > 0 ? events[events.length - 1]!.position : from;
    return events.length;
  }

  /** Stops relaying, and gives up the relay lock (another process takes over). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.running?.catch(() => undefined);
    await this.stepDown();
  }
}
