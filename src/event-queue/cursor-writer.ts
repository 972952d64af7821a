import { sql } from 'kysely';
import type { Db } from '../db/database.js';

const FLUSH_MS = 250;

/**
 * Writes queue cursors (the acknowledged event id and the last access time) behind the polls that
 * move them: every poll acknowledges, so writing each one would cost a committed write per
 * delivered event per client. Pending cursors go to the table in one statement at most every
 * FLUSH_MS. Losing the last fraction of a second of them in a crash is harmless: every client
 * sends its last_event_id with each poll, and the stored value only ever grows (GREATEST).
 */
export class CursorWriter {
  private readonly dirty = new Map<string, { ackedId: number; lastAccess: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  record(queueId: string, ackedId: number, lastAccess = Date.now()): void {
    const previous = this.dirty.get(queueId);
    this.dirty.set(queueId, { ackedId: Math.max(ackedId, previous?.ackedId ?? ackedId), lastAccess });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch(() => this.retryLater());
      }, FLUSH_MS);
      this.timer.unref();
    }
  }

  /** The pending cursor of a queue, when this process has one not yet written. */
  pending(queueId: string): number | undefined {
    return this.dirty.get(queueId)?.ackedId;
  }

  /** A deleted queue's cursor must not be written back after its row is gone. */
  forget(queueId: string): void {
    this.dirty.delete(queueId);
  }

  async flush(): Promise<void> {
    await this.flushing;
    if (this.dirty.size === 0) return;
    const rows = [...this.dirty].map(([queue_id, c]) => ({ queue_id, acked_id: c.ackedId, last_access: c.lastAccess }));
    this.dirty.clear();
    this.flushing = this.db
      .insertInto('event_queue_cursors')
      .values(rows)
      .onConflict((oc) =>
        oc.column('queue_id').doUpdateSet({
          acked_id: sql`GREATEST(event_queue_cursors.acked_id, excluded.acked_id)`,
          last_access: sql`GREATEST(event_queue_cursors.last_access, excluded.last_access)`,
        }),
      )
      .execute()
      .then(
        () => undefined,
        (error: unknown) => {
          // Put them back (unless a newer one arrived meanwhile) for the next attempt.
          for (const row of rows) if (!this.dirty.has(row.queue_id)) this.dirty.set(row.queue_id, { ackedId: row.acked_id, lastAccess: row.last_access });
          throw error;
        },
      )
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private retryLater(): void {
    if (this.dirty.size === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().catch(() => this.retryLater());
    }, FLUSH_MS * 4);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
