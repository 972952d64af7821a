import { sql } from 'kysely';
import type { Db } from './db/database.js';
import type { Bus } from './bus/bus.js';
import type { EventStore } from './eventstore/event-store.js';
import { noFoldMemory, type FoldMemory, type Projection, type Trx } from './projections-api.js';
import { PassMemory } from './fold-memory.js';
import { analyzeGrownTables, buildDeferredIndexes, createShadowTables, createShadowTablesIn, deferIndexes, dropShadowTables, swapInShadowTables, useShadowTables } from './online-rebuild.js';
import type { StoredEvent } from './eventstore/types.js';
import { ridesWithNext, runPrepared } from './db/prepared.js';

export const PROJECTION_LOCK_KEY = 7_340_002;

export interface OnlineRebuildReport {
  /** Log position the swapped-in tables reflect. */
  reached: number;
  /** Position the shadow tables reached before the switch. */
  built: number;
  /** Events folded inside the switch transaction (appended while the shadow tables were built). */
  tail: number;
  /** How long the switch held the projection lock. */
  switchMs: number;
  projections: string[];
}
/** A read-your-writes wait that ran out of time, and the runner's state at that moment. */
export interface StallReport {
  wanted: number;
  projected: number;
  knownHead: number;
  passRunning: boolean;
  lastError: string | undefined;
}

const BATCH = 1_000;
/** Events a rebuild reads per page: large pages make long runs of one type (see foldEvents). */
const REBUILD_PAGE = 20_000;
const SAFETY_INTERVAL_MS = 5_000;

/** `limit` events of the log after `after` (fewer at its end), read in advance. */
interface LogPage {
  after: number;
  limit: number;
  events: StoredEvent[];
}

interface BatchResult {
  from: number;
  reached: number;
  count: number;
  applied: Map<string, number>;
  changed: Set<string>;
  /** The position every checkpoint stands at after the batch, when they all stand at one. */
  allAt?: number;
}

/** The checkpoints were not where this process last left them: another process projected meanwhile. */
class StaleCheckpoints extends Error {}

/** The SQLSTATE claim_checkpoints raises when not every checkpoint stood where the claim said. */
const STALE_CLAIM = 'ZC001';

/** A failed claim: raised by the claim itself, or by the statement that carried it (claimCheckpoints). */
const isStaleClaim = (error: unknown): boolean => error instanceof StaleCheckpoints || (error as { code?: unknown } | undefined)?.code === STALE_CLAIM;

/**
 * Runs every projection as one group: a batch of events is applied to all read tables and all
 * checkpoints move in the same transaction, so any snapshot of the read tables reflects exactly
 * one log position (POST /register relies on that). The advisory lock makes one process at a time
 * the worker; any process may take over, since the checkpoint lives in the same database.
 */
export class ProjectionRunner {
  private position = 0;
  private running: Promise<void> | undefined;
  /**
   * What a kick during a run asks for: 'always' another pass (the caller does not know the head),
   * 'ifBehind' another pass only if the run did not reach `knownHead`.
   */
  private rerun: 'none' | 'ifBehind' | 'always' = 'none';
  /** The highest log position anyone told us about; a kick at or below `position` has nothing to do. */
  private knownHead = 0;
  /**
   * Change marks for caches of read tables (see tablesVersion): one counter; a table's mark is the
   * counter when this process last folded an event into it, and `foreignMark` when the read tables
   * moved by work this process did not see table by table (another process, a rebuild).
   */
  private changeCounter = 0;
  private foreignMark = 0;
  private readonly tableMarks = new Map<string, number>();
  /** Each projection's FoldMemory, valid while every pass since it was written was this process's. */
  private readonly memories = new Map<string, PassMemory>();
  /** Where every checkpoint stood after this process's last batch; undefined: read them. */
  private checkpointsAt: number | undefined;
  /** False after a lost connection, until a pass has read the checkpoints from the database again. */
  private confirmed = true;
  /**
   * The highest position this process knew to be in the log when it last lost its database
   * connection. Fold passes commit without waiting for the disk, so a database crash can take back
   * their last commits; until the read tables are back at this position, requests wait (readsReady).
   */
  private resyncHead = 0;
  private waiters: Array<{ position: number; resolve: (ok: boolean) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly listeners: Array<(position: number) => void> = [];
  private readonly stallListeners: Array<(report: StallReport) => void> = [];
  lastError: unknown;
  /** Events each projection has folded in this process (committed batches only); for /metrics. */
  readonly appliedEvents = new Map<string, number>();

  /**
   * `readAhead`: the pool has connections besides the one a rebuild holds (not so on the embedded
   * database), so a rebuild reads the next page of the log on another while it folds the current one.
   */
  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
    private readonly bus: Bus,
    private readonly options: { readAhead?: boolean } = {},
  ) {}

  get projectedPosition(): number {
    return this.position;
  }

  async start(): Promise<void> {
    await this.prepareCheckpoints();
    this.bus.onWake((signal) => {
      if (signal.kind === 'appended') this.kick(signal.position);
      else if (signal.position > this.position) {
        this.markAllChanged();
        this.advanceTo(signal.position);
      }
    });
    this.store.onCommit((head) => this.kick(head));
    await this.catchUp();
    this.timer = setInterval(() => this.kick(), SAFETY_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const waiter of this.waiters.splice(0)) waiter.resolve(false);
  }

  /**
   * A number that changes whenever any of `tables` may have changed in the read tables this process
   * serves, and is read before the position moves past the change. A cache of rows from `tables`
   * stays valid while it is the same; take it before reading the rows.
   */
  tablesVersion(tables: readonly string[]): number {
    let version = this.foreignMark;
    for (const table of tables) version = Math.max(version, this.tableMarks.get(table) ?? 0);
    return version;
  }

  private markChanged(changed: ReadonlySet<string>): void {
    for (const projection of this.projections) {
      if (!changed.has(projection.name)) continue;
      const mark = ++this.changeCounter;
      for (const table of projection.tables) this.tableMarks.set(table, mark);
    }
  }

  /**
   * The database dropped a connection (a restart, a crash, a failover): the checkpoints may not be
   * where this process last saw them. Until a pass has read them again, no wait is answered from
   * memory; that pass moves the known position back if the read tables lost a tail, and refolds it.
   */
  resync(): void {
    this.confirmed = false;
    this.resyncHead = Math.max(this.resyncHead, this.knownHead, this.position);
    this.markAllChanged();
    this.kick();
  }

  /**
   * True unless the database connection was lost and the read tables are not yet known to hold
   * everything this process knew to be in the log then (see resyncHead): a request answered
   * before the crash must not find its write missing after it.
   */
  get readsReady(): boolean {
    return this.confirmed && this.position >= this.resyncHead;
  }

  /** Resolves once readsReady (true), or false after `timeoutMs`. */
  untilReadsReady(timeoutMs: number): Promise<boolean> {
    return this.readsReady ? Promise.resolve(true) : this.waitFor(this.resyncHead, timeoutMs);
  }

  private markAllChanged(): void {
    // Whatever moved the read tables elsewhere may have moved the checkpoints too.
    this.checkpointsAt = undefined;
    this.forgetFolds();
    this.foreignMark = ++this.changeCounter;
  }

  /** Called when a waitFor ran out of time, with what the runner was doing (for the operator's log). */
  onStall(listener: (report: StallReport) => void): void {
    this.stallListeners.push(listener);
  }

  private reportStall(wanted: number): void {
    const report: StallReport = {
      wanted,
      projected: this.position,
      knownHead: this.knownHead,
      passRunning: this.running !== undefined,
      lastError: this.lastError === undefined ? undefined : String(this.lastError),
    };
    for (const listener of this.stallListeners) listener(report);
  }

  /** Called with the new position after every applied batch (in this process). */
  onProjected(listener: (position: number) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Folds what the log holds beyond the read tables. `head`, when the caller knows it (a commit, a
   * wake signal), skips the database round trips if the read tables are already there; without it
   * (the safety timer, an error retry) the log itself is asked.
   */
  kick(head?: number): void {
    if (head !== undefined) {
      if (head <= this.position) return;
      this.knownHead = Math.max(this.knownHead, head);
    }
    void this.catchUp(head).catch(() => undefined);
  }

  /** Resolves true once every projection has applied the log up to `position`. */
  waitFor(position: number, timeoutMs = 10_000): Promise<boolean> {
    if (this.confirmed && this.position >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { position, resolve };
      this.waiters.push(waiter);
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.reportStall(position);
        resolve(false);
      }, timeoutMs);
      waiter.resolve = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.kick(position);
    });
  }

  /** Applies everything in the log that the read tables have not seen yet. */
  catchUp(head?: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      // The running pass may have read the log before this event committed.
      this.rerun = head === undefined || this.rerun === 'always' ? 'always' : 'ifBehind';
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.rerun = 'none';
          while (await this.applyNextBatch()) {
            // keep going until the log is drained
          }
        } while (!this.stopped && this.rerunOwed());
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

  private rerunOwed(): boolean {
    return this.rerun === 'always' || (this.rerun === 'ifBehind' && this.knownHead > this.position);
  }

  private async applyNextBatch(): Promise<boolean> {
    const guess = this.checkpointsAt;
    // Without a guess, the read tables may have moved by other hands since the last pass.
    if (guess === undefined) this.forgetFolds();
    let result: BatchResult;
    try {
      result = await this.db.transaction().execute(async (trx) => {
        // The commit does not wait for the disk (docs/DECISIONS.md, "Fold passes commit without
        // waiting for the disk"): the log's commit did, and a pass a database crash takes back is
        // refolded from the checkpoint it also takes back (resync; readsReady holds requests
        // until then). With a guess, the statement that moves the checkpoints takes the lock and
        // sets that (one round trip less per pass); the checkpoints are read only after it otherwise.
        if (guess === undefined) await lockProjections(trx, { commitWithoutFlush: true });
        return this.applyBatchInTransaction(trx, BATCH, guess, undefined, (name) => this.memoryOf(name));
      });
    } catch (error) {
      // The transaction rolled back: whatever the cause, read the checkpoints next time.
      this.checkpointsAt = undefined;
      for (const memory of this.memories.values()) memory.drop();
      if (!isStaleClaim(error)) throw error;
      // Another process moved the checkpoints: go again from where they stand.
      return true;
    }
    for (const memory of this.memories.values()) memory.keep();
    this.countApplied(result.applied);
    if (guess === undefined) this.confirmFrom(result.from);
    // Read tables another process moved past what this one saw change table by table.
    if (result.from > this.position) this.markAllChanged();
    this.checkpointsAt = result.allAt;
    this.markChanged(result.changed);
    if (result.reached > this.position) {
      this.advanceTo(result.reached);
      this.bus.publishWake({ kind: 'projected', position: result.reached });
    }
    return result.count === BATCH;
  }

  /**
   * Applies up to `limit` events after the lowest checkpoint. Without `guess` the caller holds the
   * projection lock. `guess`: the position every checkpoint stood at after this process's last
   * batch. It saves reading the checkpoints, and the events come from what this process committed
   * when it has them; the checkpoint update, made before folding, takes the projection lock and
   * proves the guess (all rows still there) or throws StaleCheckpoints before anything is folded on
   * a wrong start.
   */
  async applyBatchInTransaction(trx: Trx, limit: number, guess?: number, page?: LogPage, memoryOf: (projection: string) => FoldMemory = () => noFoldMemory): Promise<BatchResult> {
    try {
      return await this.foldBatch(trx, limit, guess, page, memoryOf);
    } catch (error) {
      // The claim's error may come back with a statement that carried it.
      throw isStaleClaim(error) ? new StaleCheckpoints() : error;
    }
  }

  private async foldBatch(trx: Trx, limit: number, guess: number | undefined, page: LogPage | undefined, memoryOf: (projection: string) => FoldMemory): Promise<BatchResult> {
    const applied = new Map<string, number>();
    const changed = new Set<string>();
    if (this.projections.length === 0) {
      const head = await trx.selectFrom('events').select('position').orderBy('position', 'desc').limit(1).executeTakeFirst();
      return { from: head?.position ?? 0, reached: head?.position ?? 0, count: 0, applied, changed };
    }
    const names = this.projections.map((p) => p.name);
    const checkpoints = guess === undefined ? await this.readCheckpoints(trx) : new Map(names.map((name) => [name, guess]));
    const from = Math.min(...names.map((name) => checkpoints.get(name) ?? 0));
    // Memory only on the live path (a guess): a pass that read the checkpoints reads the log.
    const events = page?.after === from && page.limit === limit ? page.events
      : guess === undefined ? await this.store.readAll(from, limit, trx) : await this.store.readNext(from, limit, trx);
    const reached = events.length > 0 ? events[events.length - 1]!.position : from;
    // The checkpoints move before the fold: a wrong guess must stop the pass before it folds events
    // another process already folded (a unique key would fail first and hide the cause).
    if (events.length > 0) {
      if (guess !== undefined) await claimCheckpoints(trx, names, guess, reached);
      else await trx.updateTable('checkpoints').set({ position: reached }).where('name', 'in', names).where('position', '<', reached).execute();
    }
    await foldEvents(trx, this.projections, events, checkpoints, applied, changed, memoryOf);
    let count = events.length;
    let last = reached;
    if (guess !== undefined) {
      // Events committed while this pass folded join it when they are at least as many as it holds:
      // they skip a pass of their own (BEGIN and COMMIT, and the wait for this pass's end), and the
      // answers this pass already owes wait one fold longer, for no more requests than it spares.
      for (;;) {
        const more = this.store.recent.after(last, limit - count);
        if (!more || more.length === 0 || more.length < count) break;
        const joining = await this.store.readNext(last, more.length, trx);
        const to = joining[joining.length - 1]!.position;
        await claimCheckpoints(trx, names, last, to);
        await foldEvents(trx, this.projections, joining, new Map(names.map((name) => [name, last])), applied, changed, memoryOf);
        count += joining.length;
        last = to;
      }
    }
    // Every checkpoint now stands at `last` unless one was already beyond it.
    const allAt = Math.max(...names.map((name) => checkpoints.get(name) ?? 0)) <= last ? last : undefined;
    return { from, reached: last, count, applied, changed, allAt };
  }

  /**
   * Refolds the whole log into empty read tables in ONE transaction holding the projection lock:
   * other readers keep seeing the old tables until the commit swaps the new ones in, and workers
   * in other processes wait for the lock. The new tables are built beside the old ones (the shadow
   * tables of an online rebuild, created and swapped in inside this transaction) rather than by
   * emptying the old ones with DELETE: rows deleted by a transaction still open stay in every
   * index, and each look-up by key or max(id) would wade through all of them (quadratic over a
   * large log).
   */
  async rebuild(onProgress?: (position: number) => void): Promise<number> {
    let reached = 0;
    const applied = new Map<string, number>();
    const tables = this.projections.flatMap((p) => p.tables);
    await this.db.transaction().execute(async (trx) => {
      await lockProjections(trx);
      await createShadowTablesIn(trx, tables);
      await useShadowTables(trx);
      const deferred = await deferIndexes(trx, this.projections.flatMap((p) => p.queryIndexes ?? []));
      for (const projection of this.projections) {
        await trx
          .insertInto('checkpoints')
          .values({ name: projection.name, position: 0, version: projection.version })
          .onConflict((oc) => oc.column('name').doUpdateSet({ position: 0, version: projection.version }))
          .execute();
      }
      // The log's committed events never change, so a page read outside this transaction is the
      // same page; reading it meanwhile keeps the database's second core busy.
      const readPage = (after: number): Promise<LogPage> => {
        const page = this.store.readAllStored(after, REBUILD_PAGE)
          .then((stored) => this.store.openInSlices(stored))
          .then((events) => ({ after, limit: REBUILD_PAGE, events }));
        page.catch(() => undefined); // awaited by the next round, unless this one fails first
        return page;
      };
      let ahead = this.options.readAhead ? readPage(0) : undefined;
      let analyzed = new Map<string, number>();
      for (;;) {
        const page = await ahead;
        if (page && page.events.length === REBUILD_PAGE) ahead = readPage(page.events[page.events.length - 1]!.position);
        else ahead = undefined;
        const batch = await this.applyBatchInTransaction(trx, REBUILD_PAGE, undefined, page);
        reached = batch.reached;
        for (const [name, n] of batch.applied) applied.set(name, (applied.get(name) ?? 0) + n);
        onProgress?.(reached);
        if (batch.count < REBUILD_PAGE) break;
        analyzed = await analyzeGrownTables(trx, analyzed);
      }
      await buildDeferredIndexes(trx, deferred);
      await swapInShadowTables(trx, tables);
    });
    this.countApplied(applied);
    this.markAllChanged();
    this.advanceTo(reached);
    return reached;
  }

  /**
   * `rebuild --online`: refolds the read tables of `only` (default: every projection) into shadow
   * tables in short transactions while the live tables keep being served and projected; then, in
   * one short transaction holding the projection lock, folds the tail the log grew meanwhile and
   * swaps the shadow tables in. See docs/OPERATIONS.md for what it guarantees.
   */
  async rebuildOnline(options: { only?: readonly string[]; batchSize?: number; onProgress?: (position: number) => void | Promise<void> } = {}): Promise<OnlineRebuildReport> {
    const unknown = (options.only ?? []).filter((name) => !this.projections.some((p) => p.name === name));
    if (unknown.length > 0) throw new Error(`unknown projection(s): ${unknown.join(', ')}`);
    const selected = options.only ? this.projections.filter((p) => options.only!.includes(p.name)) : [...this.projections];
    const tables = selected.flatMap((p) => p.tables);
    const batchSize = options.batchSize ?? BATCH;
    const applied = new Map<string, number>();
    await createShadowTables(this.db, tables);
    let built = 0;
    let reached = 0;
    let tail = 0;
    let switchMs = 0;
    try {
      for (;;) {
        const batch = await this.db.transaction().execute(async (trx) => {
          await useShadowTables(trx);
          return this.foldInto(trx, selected, built, batchSize, applied);
        });
        built = batch.reached;
        await options.onProgress?.(built);
        if (batch.count < batchSize) break;
      }
      for (let attempt = 1; ; attempt++) {
        const started = Date.now();
        try {
          const tailApplied = new Map<string, number>();
          const result = await this.db.transaction().execute(async (trx) => {
            await lockProjections(trx);
            // DROP TABLE waits for readers of the live table; never queue every request behind a stuck one.
            await sql`SELECT set_config('lock_timeout', '5s', true)`.execute(trx);
            await useShadowTables(trx);
            let position = built;
            let count = 0;
            for (;;) {
              const batch = await this.foldInto(trx, selected, position, BATCH, tailApplied);
              position = batch.reached;
              count += batch.count;
              if (batch.count < BATCH) break;
            }
            await swapInShadowTables(trx, tables);
            for (const projection of selected) {
              await trx
                .insertInto('checkpoints')
                .values({ name: projection.name, position, version: projection.version })
                .onConflict((oc) => oc.column('name').doUpdateSet({ position, version: projection.version }))
                .execute();
            }
            return { position, count };
          });
          for (const [name, n] of tailApplied) applied.set(name, (applied.get(name) ?? 0) + n);
          reached = result.position;
          tail = result.count;
          switchMs = Date.now() - started;
          break;
        } catch (error) {
          const lockTimeout = (error as { code?: string }).code === '55P03';
          if (!lockTimeout || attempt >= 5) throw error;
        }
      }
    } catch (error) {
      await dropShadowTables(this.db).catch(() => undefined);
      throw error;
    }
    this.countApplied(applied);
    this.markAllChanged();
    this.advanceTo(reached);
    // Workers of other processes (their waiting requests) learn that the read tables moved.
    this.bus.publishWake({ kind: 'projected', position: reached });
    return { reached, built, tail, switchMs, projections: selected.map((p) => p.name) };
  }

  /** Folds up to `limit` events after `after` into `projections` (no checkpoints: the caller tracks the position). */
  private async foldInto(trx: Trx, projections: readonly Projection[], after: number, limit: number, applied: Map<string, number>): Promise<{ reached: number; count: number }> {
    const events = await this.store.readAll(after, limit, trx);
    await foldEvents(trx, projections, events, new Map(), applied, new Set());
    return { reached: events.length > 0 ? Number(events[events.length - 1]!.position) : after, count: events.length };
  }

  private countApplied(applied: Map<string, number>): void {
    for (const [name, n] of applied) this.appliedEvents.set(name, (this.appliedEvents.get(name) ?? 0) + n);
  }

  /** A pass read the checkpoints: the read tables stand at `from`, whatever this process believed. */
  private memoryOf(projection: string): PassMemory {
    let memory = this.memories.get(projection);
    if (!memory) this.memories.set(projection, (memory = new PassMemory()));
    return memory;
  }

  private forgetFolds(): void {
    for (const memory of this.memories.values()) memory.forget();
  }

  private confirmFrom(from: number): void {
    if (from < this.position) {
      this.position = from;
      this.markAllChanged();
    }
    if (this.confirmed) return;
    this.confirmed = true;
    this.advanceTo(from);
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
      await lockProjections(trx);
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

/**
 * Moves every checkpoint from `from` to `to`, having taken the projection lock (and made the commit
 * not wait for the disk), in one statement (migration 0240); it fails with STALE_CLAIM unless every
 * checkpoint stood at `from`. It rides with the pass's next statement (the fold statements that ride
 * too, up to the COMMIT, or a fold statement whose rows are read) in one round trip, and its failure
 * stops those statements and rolls the pass back before anything is folded on a wrong start.
 */
async function claimCheckpoints(trx: Trx, names: string[], from: number, to: number): Promise<void> {
  await ridesWithNext(trx, sql`SELECT claim_checkpoints(${PROJECTION_LOCK_KEY}, ${names}::text[], ${from}, ${to})`);
}

/** Makes this transaction's commit return before its WAL reaches the disk (SET LOCAL, as an expression). */
const COMMIT_WITHOUT_FLUSH = `set_config('synchronous_commit', 'off', true)`;

/**
 * Makes this transaction the one worker until it ends (the lock of every projection pass);
 * `commitWithoutFlush` for a fold pass (see applyNextBatch), in the same statement.
 */
async function lockProjections(trx: Trx, options: { commitWithoutFlush?: boolean } = {}): Promise<void> {
  if (options.commitWithoutFlush) await sql`SELECT pg_advisory_xact_lock(${PROJECTION_LOCK_KEY}), ${sql.raw(COMMIT_WITHOUT_FLUSH)}`.execute(trx);
  else await sql`SELECT pg_advisory_xact_lock(${PROJECTION_LOCK_KEY})`.execute(trx);
}

/**
 * Folds `events` (in log order) into `projections`, skipping what a projection's checkpoint says it
 * has. A run of consecutive events of one type goes to each projection in one `applyRun` when every
 * projection folding that type has a bulk fold for it (define.ts says why that keeps the result the
 * same); otherwise each event goes to every projection in turn. Sends are first gathered into
 * longer runs where that cannot change the result (sendsFirst).
 */
async function foldEvents(
  trx: Trx,
  projections: readonly Projection[],
  events: readonly StoredEvent[],
  checkpoints: ReadonlyMap<string, number>,
  applied: Map<string, number>,
  changed: Set<string>,
  memoryOf: (projection: string) => FoldMemory = () => noFoldMemory,
): Promise<void> {
  const count = (name: string, n: number) => applied.set(name, (applied.get(name) ?? 0) + n);
  const ordered = sendsFirst(projections, events);
  const groups = commutingGroupKeys(projections);
  const runKey = (type: string) => groups.get(type) ?? type;
  for (let i = 0; i < ordered.length;) {
    const key = runKey(ordered[i]!.type);
    let end = i + 1;
    while (end < ordered.length && runKey(ordered[end]!.type) === key) end++;
    const run = ordered.slice(i, end);
    const types = new Set(run.map((e) => e.type));
    const folders = projections.filter((p) => [...types].some((type) => p.handles.has(type)));
    const inBulk = (p: Projection) => p.applyRun !== undefined && [...types].every((type) => !p.handles.has(type) || p.bulkTypes?.has(type));
    if (run.length > 1 && folders.length > 0 && folders.every(inBulk)) {
      for (const projection of folders) {
        const after = checkpoints.get(projection.name) ?? 0;
        const mine = run.filter((e) => e.position > after && projection.handles.has(e.type));
        if (mine.length === 0) continue;
        if ((await projection.applyRun!(trx, mine, memoryOf(projection.name))) !== false) changed.add(projection.name);
        count(projection.name, mine.length);
      }
    } else {
      for (const event of run) {
        for (const projection of folders) {
          if (!projection.handles.has(event.type) || event.position <= (checkpoints.get(projection.name) ?? 0)) continue;
          if ((await projection.apply(trx, event, memoryOf(projection.name))) !== false) changed.add(projection.name);
          count(projection.name, 1);
        }
      }
    }
    i = end;
  }
}

const groupKeysCache = new WeakMap<readonly Projection[], Map<string, string>>();

/**
 * Event type -> its commuting group, for the types every projection folding them puts in the same
 * group (Projection.commutingGroups); types with no such agreement are left out. Worked out once per
 * list of projections: every batch asks.
 */
function commutingGroupKeys(projections: readonly Projection[]): Map<string, string> {
  const cached = groupKeysCache.get(projections);
  if (cached) return cached;
  const keys = new Map<string, string>();
  const types = new Set(projections.flatMap((p) => [...p.handles]));
  for (const type of types) {
    const declared = projections.filter((p) => p.handles.has(type)).map((p) => p.commutingGroups?.find((g) => g.has(type)));
    if (declared.length === 0 || declared.some((group) => group === undefined)) continue;
    const named = declared.map((group) => [...group!].sort().join('|'));
    if (named.every((name) => name === named[0])) keys.set(type, named[0]!);
  }
  groupKeysCache.set(projections, keys);
  return keys;
}

/**
 * `passed` (events a run of sends went ahead of) with the events of each commuting group gathered
 * together, groups in the order they first appear and the log order kept within each; as it was
 * when any event is in no group every projection folding it agrees on.
 */
function gatherGroups(groups: ReadonlyMap<string, string>, passed: readonly StoredEvent[]): StoredEvent[] {
  const byGroup = new Map<string, StoredEvent[]>();
  for (const event of passed) {
    const key = groups.get(event.type);
    if (key === undefined) return [...passed];
    const list = byGroup.get(key);
    if (list) list.push(event);
    else byGroup.set(key, [event]);
  }
  return [...byGroup.values()].flat();
}

const SEND = 'MessageSent';

/**
 * `events` reordered so that sends come in longer runs: a MessageSent may be folded before earlier
 * events that touch only rows of messages with lower ids (Projection.messagesTouched), which cannot
 * see it nor be seen by it. Everything else keeps its place: the events a send passes stay in
 * their order, after the sends before them, and any other event ends the gathering. Only when
 * every projection folding sends folds runs of them; otherwise the log order is returned as is.
 * The passed events are then gathered by commuting group (gatherGroups), so that they too fold in
 * longer runs.
 */
export function sendsFirst(projections: readonly Projection[], events: readonly StoredEvent[]): readonly StoredEvent[] {
  const senders = projections.filter((p) => p.handles.has(SEND));
  if (senders.length === 0 || !senders.every((p) => p.bulkTypes?.has(SEND) && p.applyRun)) return events;
  const touchedBy = (event: StoredEvent): number | undefined => {
    let highest = -Infinity;
    for (const projection of projections) {
      if (!projection.handles.has(event.type)) continue;
      const touched = projection.messagesTouched?.(event);
      if (touched === undefined) return undefined;
      highest = Math.max(highest, touched);
    }
    return highest;
  };
  const groups = commutingGroupKeys(projections);
  const out: StoredEvent[] = [];
  let sends: StoredEvent[] = [];
  let passed: StoredEvent[] = [];
  let passedHighest = -Infinity;
  const flush = () => {
    out.push(...sends, ...gatherGroups(groups, passed));
    sends = [];
    passed = [];
    passedHighest = -Infinity;
  };
  for (const event of events) {
    if (event.type === SEND) {
      if ((event.data as { message_id: number }).message_id <= passedHighest) flush();
      sends.push(event);
      continue;
    }
    const touched = sends.length > 0 ? touchedBy(event) : undefined;
    if (touched === undefined) {
      flush();
      out.push(event);
    } else {
      passed.push(event);
      passedHighest = Math.max(passedHighest, touched);
    }
  }
  flush();
  return out;
}
