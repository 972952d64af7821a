import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { EventCrypto } from './event-crypto.js';
import { KEY_DESTROYING_TYPES, keysDestroyedBy } from './event-crypto.js';

const POLL_MS = 2_000;

/**
 * Makes every process forget the data keys another process destroyed. The shredding process evicts
 * them at once, and a process folding the log evicts them when its projections read the shred
 * event; but a replica that runs no projection (another one holds the lock) would keep serving
 * a cached key to its event queues and audit readers. This follower reads only the key-destroying
 * events after its cursor, on every wake-up from another process and every POLL_MS in case one is lost.
 * Until it runs, a replica may open a just-shredded value for at most that long.
 */
export class KeyRevocationFollower {
  private after = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly crypto: EventCrypto,
  ) {}

  /** Starts after the current head: keys destroyed before this process started were never cached. */
  async start(): Promise<void> {
    this.after = await this.head();
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
  }

  /** Reads the key-destroying events appended since the last call (coalesces concurrent kicks). */
  kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.catchUp();
        } while (this.again);
      } catch {
        // The database is away for a moment: the next kick or poll tries again.
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async catchUp(): Promise<void> {
    // Appends commit in position order (the append lock), so nothing below the head can appear later.
    const head = await this.head();
    for (;;) {
      const { rows } = await sql<{ position: string; type: string; data: Record<string, unknown> }>`
        SELECT position::text AS position, type, data FROM events
        WHERE position > ${this.after} AND position <= ${head} AND type = ANY(${[...KEY_DESTROYING_TYPES]}::text[])
        ORDER BY position LIMIT 1000`.execute(this.db);
      for (const row of rows) {
        this.crypto.evict(keysDestroyedBy(row));
        this.after = Number(row.position);
      }
      if (rows.length < 1000) break;
    }
    this.after = Math.max(this.after, head);
  }

  private async head(): Promise<number> {
    const { rows } = await sql<{ p: string | null }>`SELECT max(position)::text AS p FROM events`.execute(this.db);
    return Number(rows[0]?.p ?? 0);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
