import { sql, type RawBuilder } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import type { DataOf } from '../src/domain/events.js';
import { FlagBit } from '../src/domain/messages/flags.js';
import { receivedSql } from '../src/read/narrow.js';
import { runPrepared } from '../src/db/prepared.js';
import type { RunEvent } from './define.js';

/**
 * The messages projection's fold of MessageFlagsChanged (see docs/MESSAGE-STATE.md): flag bits per
 * user and message in message_flags, and each user's read watermark in message_read_state. Also
 * the bit helpers the other message folds use.
 */

type FlagsChanged = DataOf<'MessageFlagsChanged'>;

/** Sets `set` and clears `clear` on the user's rows of `messageIds` (ids are parameters: one statement text, prepared). */
export async function setBits(trx: Trx, userId: number, messageIds: readonly number[], set: number, clear = 0): Promise<void> {
  if (messageIds.length === 0) return;
  for (let i = 0; i < messageIds.length; i += 1000) {
    const ids = messageIds.slice(i, i + 1000);
    if (set !== 0) {
      // Every row written keeps the `set` bits, so none is left empty.
      await runPrepared(trx, sql`INSERT INTO message_flags (user_id, message_id, flags)
        SELECT DISTINCT ${userId}::int, id, ${set}::int FROM unnest(${ids}::int[]) AS id
        ON CONFLICT (user_id, message_id) DO UPDATE SET flags = (message_flags.flags & ${~clear}::int) | ${set}::int`);
    } else if (clear !== 0) {
      const rows = sql`user_id = ${userId} AND message_id = ANY(${ids}::int[])`;
      await clearFlagBits(trx, clear, rows, rows);
    }
  }
}

/**
 * Clears `bits` in the rows `scope` selects, then drops the rows of `emptyScope` left with no flag
 * at all, in one statement: the DELETE takes exactly the rows the UPDATE does not touch.
 */
export async function clearFlagBits(trx: Trx, bits: number, scope: RawBuilder<unknown>, emptyScope: RawBuilder<unknown>): Promise<void> {
  await runPrepared(trx, sql`WITH ${clearFlagBitsCtes(bits, scope, emptyScope)} SELECT 1`);
}

/** clearFlagBits as two CTEs (`emptied`, `cleared`), to ride along in another statement. */
export function clearFlagBitsCtes(bits: number, scope: RawBuilder<unknown>, emptyScope: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`emptied AS (
      DELETE FROM message_flags
      WHERE (${emptyScope}) AND (flags = 0 OR ((${scope}) AND (flags & ${bits}::int) <> 0 AND (flags & ${~bits}::int) = 0))
    ),
    cleared AS (
      UPDATE message_flags SET flags = flags & ${~bits}::int
      WHERE (${scope}) AND (flags & ${bits}::int) <> 0 AND NOT ((${emptyScope}) AND (flags & ${~bits}::int) = 0)
    )`;
}

const COMPACTION_WINDOW = 10_000;

/** The user's read watermark moves up to `readThrough` (never down). */
function watermarkUpsert(trx: Trx, userId: number, readThrough: number) {
  return trx
    .insertInto('message_read_state')
    .values({ user_id: userId, read_through: readThrough })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ read_through: sql`GREATEST(message_read_state.read_through, excluded.read_through)` as never }));
}

/** Whether a compaction up to `upTo` is worth checking from the watermark `from` (compactReadState's own test). */
const mayCompact = (upTo: number, from: number) => upTo > from && upTo - from <= COMPACTION_WINDOW;

/**
 * Keeps READ exceptions from piling up: when every received message up to `upTo` is read, the
 * watermark moves there and the READ bits below it go. Bounded to a window of ids so one flag
 * change never scans a user's whole history.
 */
async function compactReadState(trx: Trx, userId: number, upTo: number, markRead: readonly number[] = []): Promise<void> {
  // The watermark and whether anything up to `upTo` is still unread, in one round trip; marking
  // `markRead` read (as setBits would) rides along. The statement sees the rows as they were
  // before it, so the check counts those messages as read by leaving them out.
  const flags = sql`COALESCE((SELECT f.flags FROM message_flags f WHERE f.user_id = ${userId} AND f.message_id = m.id), 0)`;
  const marking = markRead.length === 0 ? sql`` : sql`marked AS (
      INSERT INTO message_flags (user_id, message_id, flags)
      SELECT DISTINCT ${userId}::int, id, ${FlagBit.READ}::int FROM unnest(${markRead}::int[]) AS id
      ON CONFLICT (user_id, message_id) DO UPDATE SET flags = (message_flags.flags & ${~FlagBit.UNREAD}) | ${FlagBit.READ}),`;
  const notMarked = markRead.length === 0 ? sql`` : sql`AND m.id <> ALL(${markRead}::int[])`;
  const { rows } = await runPrepared(trx, sql<{ from_id: number; unread: boolean }>`
    WITH ${marking} st AS (SELECT COALESCE((SELECT read_through FROM message_read_state WHERE user_id = ${userId}), 0) AS from_id)
    SELECT st.from_id, EXISTS (
      SELECT 1 FROM messages m
      WHERE ${upTo} > st.from_id AND ${upTo} - st.from_id <= ${COMPACTION_WINDOW}
        AND m.id > st.from_id AND m.id <= ${upTo} ${notMarked} AND ${receivedSql(userId)}
        AND (${flags} & ${FlagBit.UNREAD} <> 0 OR ${flags} & ${FlagBit.READ} = 0)
    ) AS unread FROM st`);
  const from = Number(rows[0]!.from_id);
  if (!mayCompact(upTo, from) || rows[0]!.unread) return;
  // Only the READ bits the watermark passed now: the rows below the old one were visited when it
  // got there (a READ bit set there since is redundant and left), and a user's rows below it grow
  // with their whole history. The watermark moves in the same statement.
  const passed = sql`user_id = ${userId} AND message_id > ${from} AND message_id <= ${upTo}`;
  await runPrepared(trx, sql`WITH moved AS (${watermarkUpsert(trx, userId, upTo)}), ${clearFlagBitsCtes(FlagBit.READ, passed, passed)} SELECT 1`);
}

/** Bits set and cleared on some of one user's flag rows: `flags = (flags & ~clear) | set`. */
export interface BitChange {
  readonly set: number;
  readonly clear: number;
}

/** The bit change of a flag change on each of its messages; undefined for a flag that is not stored. */
function bitChangeOf(d: FlagsChanged): BitChange | undefined {
  const bit = d.flag === 'read' ? FlagBit.READ : d.flag === 'starred' ? FlagBit.STARRED : d.flag === 'collapsed' ? FlagBit.COLLAPSED : 0;
  if (bit === 0) return undefined;
  // An unread message is one with the UNREAD exception or without READ: the two go together.
  if (bit === FlagBit.READ) return d.op === 'add' ? { set: FlagBit.READ, clear: FlagBit.UNREAD } : { set: FlagBit.UNREAD, clear: FlagBit.READ };
  return d.op === 'add' ? { set: bit, clear: 0 } : { set: 0, clear: bit };
}

const isReadMark = (d: FlagsChanged) => d.read_through === null && d.flag === 'read' && d.op === 'add';
const highestId = (d: FlagsChanged) => d.message_ids.reduce((highest, id) => Math.max(highest, id), 0);

/** The one-event fold of MessageFlagsChanged. */
export async function foldFlagChange(trx: Trx, d: FlagsChanged): Promise<void> {
  if (d.read_through !== null) {
    await runPrepared(trx, watermarkUpsert(trx, d.user_id, d.read_through));
    // Below the watermark, read/unread exceptions are void.
    await clearFlagBits(trx, FlagBit.READ | FlagBit.UNREAD, sql`user_id = ${d.user_id} AND message_id <= ${d.read_through}`, sql`user_id = ${d.user_id}`);
    const extra = d.message_ids.filter((id) => id > d.read_through!);
    if (extra.length > 0) await setBits(trx, d.user_id, extra, FlagBit.READ, FlagBit.UNREAD);
    return;
  }
  const change = bitChangeOf(d);
  if (!change || d.message_ids.length === 0) return;
  if (isReadMark(d)) {
    // A long list goes in chunks first; a short one is marked by the compaction's own statement.
    if (d.message_ids.length > 1000) await setBits(trx, d.user_id, d.message_ids, change.set, change.clear);
    await compactReadState(trx, d.user_id, highestId(d), d.message_ids.length > 1000 ? [] : d.message_ids);
  } else await setBits(trx, d.user_id, d.message_ids, change.set, change.clear);
}

/** Rows per statement of a bulk flag fold. */
const CHUNK = 5_000;

/**
 * Bit changes of many users and messages gathered in log order, then written with a few set-based
 * statements. Two changes of one row compose: clearing c1 and setting s1, then c2 and s2, is
 * clearing c1|c2 and setting (s1 & ~c2) | s2. A row exists exactly when its flags are not 0 (a
 * missing row is 0), as after setBits: a change that sets bits writes the row; one that only
 * clears drops the row it leaves empty.
 */
export class PendingBitChanges {
  private readonly rows = new Map<number, Map<number, BitChange>>();

  has(userId: number): boolean {
    return this.rows.has(userId);
  }

  add(userId: number, messageIds: readonly number[], change: BitChange): void {
    let mine = this.rows.get(userId);
    if (!mine) this.rows.set(userId, (mine = new Map()));
    for (const id of messageIds) {
      const before = mine.get(id);
      mine.set(id, before ? { set: (before.set & ~change.clear) | change.set, clear: before.clear | change.clear } : change);
    }
  }

  async flush(trx: Trx): Promise<void> {
    // Rows that get bits set, by change (few distinct ones: each takes one statement); rows that only lose bits.
    const setting = new Map<string, { change: BitChange; users: number[]; messages: number[] }>();
    const clearing: Array<{ u: number; m: number; c: number }> = [];
    for (const [u, mine] of this.rows) {
      for (const [m, change] of mine) {
        if (change.set === 0) {
          if (change.clear !== 0) clearing.push({ u, m, c: change.clear });
          continue;
        }
        const key = `${change.set}:${change.clear}`;
        let rows = setting.get(key);
        if (!rows) setting.set(key, (rows = { change, users: [], messages: [] }));
        rows.users.push(u);
        rows.messages.push(m);
      }
    }
    this.rows.clear();
    for (const { change, users, messages } of setting.values()) {
      for (let i = 0; i < users.length; i += CHUNK) {
        await runPrepared(trx, sql`INSERT INTO message_flags (user_id, message_id, flags)
          SELECT u, m, ${change.set}::int FROM unnest(${users.slice(i, i + CHUNK)}::int[], ${messages.slice(i, i + CHUNK)}::int[]) AS x(u, m)
          ON CONFLICT (user_id, message_id) DO UPDATE SET flags = (message_flags.flags & ${~change.clear}::int) | ${change.set}::int`);
      }
    }
    // Not prepared: a join with message_flags (see foldReactions in messages-bulk.ts).
    for (let i = 0; i < clearing.length; i += CHUNK) {
      await sql`WITH x AS MATERIALIZED (
          SELECT * FROM json_to_recordset(${JSON.stringify(clearing.slice(i, i + CHUNK))}::json) AS x(u int, m int, c int)),
        emptied AS (
          DELETE FROM message_flags f USING x WHERE f.user_id = x.u AND f.message_id = x.m AND (f.flags & ~x.c) = 0)
        UPDATE message_flags f SET flags = f.flags & ~x.c FROM x
        WHERE f.user_id = x.u AND f.message_id = x.m AND (f.flags & x.c) <> 0 AND (f.flags & ~x.c) <> 0`.execute(trx);
    }
  }
}

async function readWatermarks(trx: Trx, userIds: readonly number[]): Promise<Map<number, number>> {
  const { rows } = await runPrepared(trx, sql<{ user_id: number; read_through: number }>`SELECT user_id, read_through FROM message_read_state
    WHERE user_id = ANY(${userIds}::int[])`);
  const watermarks = new Map(userIds.map((id) => [id, 0]));
  for (const row of rows) watermarks.set(row.user_id, Number(row.read_through));
  return watermarks;
}

/**
 * A run of MessageFlagsChanged, as the one-event fold leaves it. Most changes only set or clear
 * bits of the messages they list: those gather into PendingBitChanges. A change of the read state
 * (a watermark given, or a read mark that may compact the user's read state, which depends on the
 * rows before it) folds alone, after the user's gathered changes are written; other users' changes
 * do not touch its rows, so they may wait.
 */
export async function foldFlagChanges(trx: Trx, run: ReadonlyArray<RunEvent<'MessageFlagsChanged'>>): Promise<void> {
  const watermarks = await readWatermarks(trx, [...new Set(run.map((e) => e.data.user_id))]);
  const pending = new PendingBitChanges();
  for (const { data: d } of run) {
    const change = bitChangeOf(d);
    const alone = d.read_through !== null || (isReadMark(d) && mayCompact(highestId(d), watermarks.get(d.user_id)!));
    if (alone) {
      if (pending.has(d.user_id)) await pending.flush(trx);
      await foldFlagChange(trx, d);
      watermarks.set(d.user_id, (await readWatermarks(trx, [d.user_id])).get(d.user_id)!);
    } else if (change) pending.add(d.user_id, d.message_ids, change);
  }
  await pending.flush(trx);
}
