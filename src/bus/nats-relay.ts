import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Bus } from './bus.js';

export const RELAY_LOCK_KEY = 7_340_003;
const BATCH = 500;

interface RelaySession {
  conn: Db;
  /** The last position JetStream holds. */
  from: number;
  release(): void;
}

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
  private session: RelaySession | undefined;
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
    this.session ??= await this.openSession();
    if (!this.session) {
      // Another process relays; check again later in case it dies.
      this.scheduleRetry();
      return;
    }
    const session = this.session;
    try {
      for (;;) {
        // What this process committed comes from memory; anything else is read on the session's own
        // connection, whose answer also proves the session, and so the lock, is alive.
        const events = this.store.recent.after(session.from, BATCH) ?? (await this.store.readAll(session.from, BATCH, session.conn));
        await this.bus.publishEvents(events);
        if (events.length > 0) session.from = events[events.length - 1]!.position;
        this.relayedPosition = session.from;
        if (events.length < BATCH) return;
      }
    } catch (error) {
      // Where JetStream stopped is unknown now (NATS or the connection went away mid-batch): ask it afresh.
      this.endSession();
      throw error;
    }
  }

  /**
   * Takes the relay lock on a connection of its own and keeps both until stop() or a failure, so a
   * drain costs no lock round trips. While the lock is held nobody else publishes, so the position
   * JetStream reported at the start stays true.
   */
  private openSession(): Promise<RelaySession | undefined> {
    return new Promise((resolve, reject) => {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      this.db
        .connection()
        .execute(async (conn) => {
          const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${RELAY_LOCK_KEY}) AS locked`.execute(conn);
          if (!rows[0]!.locked) return resolve(undefined);
          try {
            const from = (await this.bus.lastPublishedPosition()) ?? 0;
            resolve({ conn, from, release });
          } catch (error) {
            release();
            reject(error);
          }
          await released;
          await sql`SELECT pg_advisory_unlock(${RELAY_LOCK_KEY})`.execute(conn);
        })
        .catch(reject);
    });
  }

  private endSession(): void {
    this.session?.release();
    this.session = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.endSession();
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}
