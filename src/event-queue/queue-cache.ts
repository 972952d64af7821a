import type { Db } from '../db/database.js';

export interface CachedQueue<Row> {
  row: Row;
  /** The highest acknowledged event id this process knows of (the stored cursor only grows). */
  ackedId: number;
}

/**
 * Queue rows for GET /events, so a poll costs no database round trip. A queue's row never changes
 * after registration; it can only disappear (deleted, expired). Every entry is valid at `mark`, a
 * change mark of the event_queues read table (see ProjectionRunner.tablesVersion): when the mark
 * moves, whatever moved it (a registration, a deletion, another process's work) is checked with
 * one query over all cached ids before any entry is trusted again, and the missing ones are dropped.
 */
export class QueueCache<Row> {
  private readonly entries = new Map<string, CachedQueue<Row>>();
  private mark = -1;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    /** The current change mark of event_queues; read before the rows it vouches for. */
    private readonly version: () => number,
  ) {}

  /**
   * The cached queue, valid at the current mark, or undefined when the caller must read it; `mark`
   * goes back to set() with what the caller read.
   */
  async get(queueId: string): Promise<{ entry: CachedQueue<Row> | undefined; mark: number }> {
    for (let current = this.version(); current !== this.mark; current = this.version()) await this.recheck(current);
    return { entry: this.entries.get(queueId), mark: this.mark };
  }

  /**
   * A row read from the table after get() returned `mark`. It is kept only if no recheck happened
   * meanwhile: a deletion the caller's read came too early to see would have been missed.
   */
  set(queueId: string, row: Row, ackedId: number, mark: number): CachedQueue<Row> {
    const entry = { row, ackedId };
    if (mark === this.mark && this.checking === undefined) this.entries.set(queueId, entry);
    return entry;
  }

  delete(queueId: string): void {
    this.entries.delete(queueId);
  }

  get size(): number {
    return this.entries.size;
  }

  private recheck(mark: number): Promise<void> {
    if (!this.checking) {
      const checking = this.checkAll(mark);
      this.checking = checking;
      void checking.finally(() => {
        if (this.checking === checking) this.checking = undefined;
      }).catch(() => undefined);
    }
    return this.checking;
  }

  private async checkAll(mark: number): Promise<void> {
    const ids = [...this.entries.keys()];
    const alive = new Set<string>();
    for (let i = 0; i < ids.length; i += 5_000) {
      const rows = await this.db.selectFrom('event_queues').select('id').where('id', 'in', ids.slice(i, i + 5_000)).execute();
      for (const row of rows) alive.add(row.id);
    }
    for (const id of ids) if (!alive.has(id)) this.entries.delete(id);
    this.mark = mark;
  }
}
