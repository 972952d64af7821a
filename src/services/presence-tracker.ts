import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { runPrepared } from '../db/prepared.js';
import { decidePing, type LastSeen, type PingOutcome, type PresenceStatus } from '../domain/presence/decider.js';
import { OFFLINE_THRESHOLD_SECS } from '../domain/presence/rules.js';
import { readLastSeen } from '../read/presence.js';

/** How often this process writes the last-seen times its pings moved (the bound on what a crash loses). */
export const PRESENCE_FLUSH_MS = 1_000;
/** A user not pinged here for this long is forgotten; their next ping reads the row again. */
const FORGET_AFTER_SECS = OFFLINE_THRESHOLD_SECS;

interface Known extends LastSeen {
  realmId: number;
  /** UNIX seconds of the last ping this process took for the user. */
  pingedAt: number;
}

/**
 * This process's view of presence_last_seen. A ping that only moves the times (every ping of a
 * connected client, once a minute) changes nothing others are told about, so it costs no statement:
 * the new times are kept here, shown at once by this process's reads (see `local`), and written for
 * every user at once every PRESENCE_FLUSH_MS. A ping that changes what others see (the user comes
 * online, goes idle, comes back) still goes to the row at once, compare-and-set, before its event
 * is logged: two processes (or two concurrent pings) decide a change once.
 *
 * The view may lag another process's writes; a stale view can only see a change that is not there
 * (the compare-and-set reads the row and finds none), or miss one for one ping, until the next
 * flush reads the row back (RETURNING).
 */
export class PresenceTracker {
  private readonly known = new Map<number, Known>();
  private readonly dirty = new Set<number>();
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db, private readonly flushMs = PRESENCE_FLUSH_MS) {}

  start(): void {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), this.flushMs);
    this.timer.unref();
  }

  /** Writes what is pending; the process is going away. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** The times this process took for a user that the row may not hold yet. */
  local(userId: number): { last_active_time: number | null; last_connected_time: number } | undefined {
    return this.known.get(userId);
  }

  /** Drops what this process believes of a user (tests moving the row behind its back). */
  forget(userId: number): void {
    if (!this.dirty.has(userId)) this.known.delete(userId);
  }

  /** One ping: what the row becomes and whether others now see a different presence. */
  async ping(userId: number, realmId: number, status: PresenceStatus, now: number): Promise<PingOutcome> {
    let prev: LastSeen | undefined = this.known.get(userId);
    // A row just read is what the compare-and-set decides on: no need to read it again.
    let fresh: { row: LastSeen | undefined } | undefined;
    if (!prev) {
      prev = await readLastSeen(this.db, userId);
      fresh = { row: prev };
      if (prev) this.remember(userId, realmId, prev, now);
    }
    const outcome = decidePing(prev, status, now);
    if (outcome.changed) return this.recordChange(userId, realmId, status, now, fresh);
    if (outcome.write) {
      this.remember(userId, realmId, outcome.next, now);
      this.dirty.add(userId);
    } else this.known.get(userId)!.pingedAt = now;
    return outcome;
  }

  /** Writes every pending row in one statement; never moves a time back, never touches logged_status. */
  flush(): Promise<void> {
    // One flush at a time: a second caller waits for the running one, then writes what came since.
    // The chain itself never rejects (a failed flush puts its rows back); the caller gets the error.
    const run = (this.flushing ?? Promise.resolve()).then(() => this.flushNow());
    const settled: Promise<void> = run.then(
      () => undefined,
      () => undefined,
    );
    this.flushing = settled;
    void settled.then(() => {
      if (this.flushing === settled) this.flushing = undefined;
    });
    return run;
  }

  private async flushNow(): Promise<void> {
    this.sweep();
    if (this.dirty.size === 0) return;
    const ids = [...this.dirty];
    this.dirty.clear();
    const rows = ids.map((id) => this.known.get(id)!);
    try {
      const result = await sql<{ user_id: number; last_active_time: string | null; last_connected_time: string; logged_status: PresenceStatus }>`
        UPDATE presence_last_seen AS l SET
          last_active_time = GREATEST(l.last_active_time, v.active),
          last_connected_time = GREATEST(l.last_connected_time, v.connected)
        FROM unnest(${ids}::int[], ${rows.map((r) => r.last_active_time)}::bigint[], ${rows.map((r) => r.last_connected_time)}::bigint[]) AS v(user_id, active, connected)
        WHERE l.user_id = v.user_id
        RETURNING l.user_id, l.last_active_time, l.last_connected_time, l.logged_status`.execute(this.db);
      for (const row of result.rows) {
        const mine = this.known.get(row.user_id);
        // A ping taken while the statement ran is newer than what it returns: keep it.
        if (!mine || this.dirty.has(row.user_id)) continue;
        mine.last_active_time = row.last_active_time === null ? null : Number(row.last_active_time);
        mine.last_connected_time = Number(row.last_connected_time);
        mine.logged_status = row.logged_status;
      }
    } catch (error) {
      for (const id of ids) this.dirty.add(id);
      throw error;
    }
  }

  private sweep(): void {
    const cutoff = Math.floor(Date.now() / 1000) - FORGET_AFTER_SECS;
    for (const [id, entry] of this.known) if (entry.pingedAt < cutoff && !this.dirty.has(id)) this.known.delete(id);
  }

  private remember(userId: number, realmId: number, seen: LastSeen, now: number): void {
    this.known.set(userId, { ...seen, realmId, pingedAt: now });
  }

  /**
   * A visible change: pending times first (the row must hold them for the compare-and-set to
   * decide on), then read, decide and write conditionally, retrying on the row another writer moved.
   * `fresh`: the row as the caller has just read it (nothing of this user was pending then).
   */
  private async recordChange(userId: number, realmId: number, status: PresenceStatus, now: number, fresh?: { row: LastSeen | undefined }): Promise<PingOutcome> {
    if (this.dirty.has(userId)) {
      fresh = undefined;
      await this.flush();
    }
    for (;;) {
      const prev = fresh ? fresh.row : await readLastSeen(this.db, userId);
      fresh = undefined;
      const outcome = decidePing(prev, status, now);
      if (!outcome.write) {
        if (prev) this.remember(userId, realmId, prev, now);
        return outcome;
      }
      if (await this.compareAndSet(userId, realmId, prev, outcome.next)) {
        this.remember(userId, realmId, outcome.next, now);
        return outcome;
      }
    }
  }

  private async compareAndSet(userId: number, realmId: number, prev: LastSeen | undefined, next: LastSeen): Promise<boolean> {
    if (!prev) {
      const inserted = await this.db
        .insertInto('presence_last_seen')
        .values({ user_id: userId, realm_id: realmId, ...next })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
    }
    const updated = await runPrepared(this.db, this.db
      .updateTable('presence_last_seen')
      .set(next)
      .where('user_id', '=', userId)
      .where((eb) => (prev.last_active_time === null ? eb('last_active_time', 'is', null) : eb('last_active_time', '=', prev.last_active_time)))
      .where('last_connected_time', '=', prev.last_connected_time)
      .where('logged_status', '=', prev.logged_status)
      // RETURNING, not the affected-row count: the embedded backend reports no count for a prepared (marked) statement.
      .returning('user_id'));
    return updated.rows.length === 1;
  }
}
