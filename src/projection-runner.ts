import { sql } from 'kysely';
import type { Db } from './db/database.js';
import type { Bus } from './bus/bus.js';
import type { EventStore } from './eventstore/event-store.js';
import type { Projection, Trx } from './projections-api.js';
import { upcast } from './eventstore/upcast.js';

export const PROJECTION_LOCK_KEY = 7_340_002;
const BATCH = 1_000;
const SAFETY_INTERVAL_MS = 5_000;

/**
 * Runs every projection as one group: a batch of events is applied to all read tables and all
 * checkpoints move in the same transaction, so any snapshot of the read tables reflects exactly
 * one log position (POST /register relies on that). The advisory lock makes one process at a time
 * the worker; any process may take over, since the checkpoint lives in the same database.
 */
export class ProjectionRunner {
  private position = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private waiters: Array<{ position: number; resolve: (ok: boolean) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly listeners: Array<(position: number) => void> = [];
  lastError: unknown;

  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
    private readonly bus: Bus,
  ) {}

  get projectedPosition(): number {
    return this.position;
  }

  async start(): Promise<void> {
    await this.prepareCheckpoints();
    this.bus.onWake((signal) => {
      if (signal.kind === 'appended') this.kick();
      else if (signal.position > this.position) this.advanceTo(signal.position);
    });
    this.store.onCommit(() => this.kick());
    await this.catchUp();
    this.timer = setInterval(() => this.kick(), SAFETY_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const waiter of this.waiters.splice(0)) waiter.resolve(false);
  }

  /** Called with the new position after every applied batch (in this process). */
  onProjected(listener: (position: number) => void): void {
    this.listeners.push(listener);
  }

  kick(): void {
    void this.catchUp().catch(() => undefined);
  }

  /** Resolves true once every projection has applied the log up to `position`. */
  waitFor(position: number, timeoutMs = 10_000): Promise<boolean> {
    if (this.position >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { position, resolve };
      this.waiters.push(waiter);
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      waiter.resolve = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.kick();
    });
  }

  /** Applies everything in the log that the read tables have not seen yet. */
  catchUp(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (await this.applyNextBatch()) {
            // keep going until the log is drained
          }
        } while (this.again && !this.stopped);
        this.lastError = undefined;
      } catch (error) {
        this.lastError = error;
        setTimeout(() => this.kick(), 500).unref();
        throw error;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async applyNextBatch(): Promise<boolean> {
    const result = await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PROJECTION_LOCK_KEY})`.execute(trx);
      return this.applyBatchInTransaction(trx, BATCH);
    });
    if (result.reached > this.position) {
      this.advanceTo(result.reached);
      this.bus.publishWake({ kind: 'projected', position: result.reached });
    }
    return result.count === BATCH;
  }

  /** Applies up to `limit` events after the lowest checkpoint; the caller holds the projection lock. */
  async applyBatchInTransaction(trx: Trx, limit: number): Promise<{ reached: number; count: number }> {
    if (this.projections.length === 0) {
      const head = await trx.selectFrom('events').select('position').orderBy('position', 'desc').limit(1).executeTakeFirst();
      return { reached: head?.position ?? 0, count: 0 };
    }
    const checkpoints = await this.readCheckpoints(trx);
    const from = Math.min(...this.projections.map((p) => checkpoints.get(p.name) ?? 0));
    const events = await trx
      .selectFrom('events')
      .select(['position', 'event_id', 'stream_id', 'stream_version', 'type', 'schema_version', 'data', 'metadata', 'hash'])
      .where('position', '>', from)
      .orderBy('position')
      .limit(limit)
      .execute();
    for (const row of events) {
      const event = upcast(row as never);
      for (const projection of this.projections) {
        if (event.position <= (checkpoints.get(projection.name) ?? 0)) continue;
        if (projection.handles.has(event.type)) await projection.apply(trx, event);
      }
    }
    const reached = events.length > 0 ? events[events.length - 1]!.position : from;
    if (events.length > 0) {
      await trx
        .updateTable('checkpoints')
        .set({ position: reached })
        .where('name', 'in', this.projections.map((p) => p.name))
        .where('position', '<', reached)
        .execute();
    }
    return { reached, count: events.length };
  }

  /**
   * Empties every read table and refolds the whole log in ONE transaction holding the projection
   * lock: other readers keep seeing the old tables until the commit swaps them in (MVCC), and
   * workers in other processes wait for the lock.
   */
  async rebuild(onProgress?: (position: number) => void): Promise<number> {
    let reached = 0;
    await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PROJECTION_LOCK_KEY})`.execute(trx);
      for (const projection of this.projections) {
        for (const table of projection.tables) await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
      }
      for (const projection of this.projections) {
        await trx
          .insertInto('checkpoints')
          .values({ name: projection.name, position: 0, version: projection.version })
          .onConflict((oc) => oc.column('name').doUpdateSet({ position: 0, version: projection.version }))
          .execute();
      }
      for (;;) {
        const batch = await this.applyBatchInTransaction(trx, 5_000);
        reached = batch.reached;
        onProgress?.(reached);
        if (batch.count < 5_000) break;
      }
    });
    this.advanceTo(reached);
    return reached;
  }

  private advanceTo(position: number): void {
    this.position = Math.max(this.position, position);
    const ready = this.waiters.filter((w) => w.position <= this.position);
    this.waiters = this.waiters.filter((w) => w.position > this.position);
    for (const waiter of ready) waiter.resolve(true);
    for (const listener of this.listeners) listener(this.position);
  }

  private async readCheckpoints(trx: Trx): Promise<Map<string, number>> {
    const rows = await trx.selectFrom('checkpoints').select(['name', 'position']).execute();
    return new Map(rows.map((r) => [r.name, r.position]));
  }

  /** A projection that is new or whose version changed is emptied and refolded from the start. */
  private async prepareCheckpoints(): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PROJECTION_LOCK_KEY})`.execute(trx);
      const rows = await trx.selectFrom('checkpoints').select(['name', 'version']).execute();
      const known = new Map(rows.map((r) => [r.name, r.version]));
      for (const projection of this.projections) {
        if (known.get(projection.name) === projection.version) continue;
        for (const table of projection.tables) await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
        await trx
          .insertInto('checkpoints')
          .values({ name: projection.name, position: 0, version: projection.version })
          .onConflict((oc) => oc.column('name').doUpdateSet({ position: 0, version: projection.version }))
          .execute();
      }
    });
  }
}
