import { sql } from 'kysely';
import { decideBotStorage, entrySize, type BotStorageCommand, type BotStorageState } from '../domain/bot-storage/decider.js';
import { errors } from '../domain/errors.js';
import type { Db } from '../db/database.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';
import { KeyedQueue } from './keyed-queue.js';
import { botStorageKeyId } from '../eventstore/crypto/personal-fields.js';
import type { BotStorageForgotten, BotStorageRemoved, BotStorageSet } from '../domain/bot-storage/events.js';
import { botStorageProjection } from '../../projections/bot-storage.js';

export const botStorageStream = (userId: number) => `bot-storage-${userId}`;

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The named entries, or every entry when no key is named (as the real server, an empty list means all).
 * Writes answer before their fold (see runBotStorage): the read waits for the fold of the stream's
 * last event first, so it sees every write acknowledged before it, from any process.
 */
export async function readBotStorage(ctx: ServiceContext, userId: number, keys: string[] | undefined): Promise<Record<string, string>> {
  await lastEventFolded(ctx, userId);
  let query = ctx.db.selectFrom('bot_storage').select(['key', 'value']).where('user_id', '=', userId);
  // No keys named: every entry; an empty list names none.
  const named = keys ? [...new Set(keys)] : undefined;
  if (named?.length === 0) return {};
  if (named) query = query.where('key', 'in', named);
  const rows = await query.execute();
  if (named && rows.length !== named.length) throw errors.badRequest('Key does not exist.');
  rows.sort((a, b) => byCodeUnit(a.key, b.key));
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** One queue per bot: a bot's writes are decided one after another (see KeyedQueue). */
const writes = new KeyedQueue<number>();

/** The last event of the bot's storage stream (one indexed row), once the read tables include it. */
async function lastEventFolded(ctx: ServiceContext, userId: number) {
  const last = await ctx.db
    .selectFrom('events')
    .select(['type', 'stream_version', 'position', sql<number | null>`(data->>'key_generation')::int`.as('generation')])
    .where('stream_id', '=', botStorageStream(userId))
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last) return undefined;
  const position = Number(last.position);
  if (position > ctx.projectedPosition()) await ctx.waitForProjections(position);
  return last;
}

/** A storage write of this process, which the read tables may not include yet. */
interface OwnWrite {
  position: number;
  version: number;
  event: BotStorageSet | BotStorageRemoved;
}

/**
 * Per log (one per server; tests run many in a process) and bot: this process's storage writes
 * that were not folded when last looked at, oldest first.
 */
const ownWritesByLog = new WeakMap<object, Map<number, OwnWrite[]>>();
const ownWritesOf = (ctx: ServiceContext): Map<number, OwnWrite[]> => {
  let writes = ownWritesByLog.get(ctx.store);
  if (!writes) ownWritesByLog.set(ctx.store, (writes = new Map()));
  return writes;
};

const keysOf = (event: OwnWrite['event']): string[] =>
  event.type === 'BotStorageSet' ? Object.keys(event.data.storage) : event.data.keys;

interface DecisionRow {
  type: string | null;
  stream_version: number | null;
  position: number | null;
  generation: number | null;
  size: string | number | null;
  named: Record<string, number> | string | null;
  folded: string | number;
}

/**
 * What a write decides on, in one statement: the storage stream's last event, the storage's
 * sizes, counted in the database (length() counts characters, as the real server does): the whole
 * storage's and each named entry's, or every entry's when `everyKey`; and the log position the
 * read tables stand at, from the same snapshot as the sizes.
 */
async function readDecisionRow(db: Db, userId: number, keys: string[], everyKey: boolean): Promise<DecisionRow> {
  const { rows } = await sql<DecisionRow>`
    SELECT e.type, e.stream_version, e.position, (e.data->>'key_generation')::int AS generation, st.size, st.named,
      (SELECT position FROM checkpoints WHERE name = ${botStorageProjection.name}) AS folded
    FROM (SELECT sum(length(key) + length(value)) AS size,
            jsonb_object_agg(key, length(key) + length(value)) FILTER (WHERE ${everyKey} OR key = ANY(${keys}::text[])) AS named
          FROM bot_storage WHERE user_id = ${userId}) st
    LEFT JOIN LATERAL (SELECT type, stream_version, position, data FROM events
          WHERE stream_id = ${botStorageStream(userId)} ORDER BY stream_version DESC LIMIT 1) e ON true`.execute(db);
  return rows[0]!;
}

/** `state` with `events` (writes after it, in order) applied. */
function applyWrites(state: BotStorageState, events: ReadonlyArray<OwnWrite['event']>): BotStorageState {
  const existing = new Map(state.existing);
  let total = state.total_size;
  for (const event of events) {
    if (event.type === 'BotStorageSet') {
      for (const [key, value] of Object.entries(event.data.storage)) {
        total += entrySize(key, value) - (existing.get(key) ?? 0);
        existing.set(key, entrySize(key, value));
      }
    } else {
      for (const key of event.data.keys) total -= existing.get(key) ?? 0;
      for (const key of event.data.keys) existing.delete(key);
    }
  }
  return { total_size: total, existing };
}

/** The storage's sizes as the row reads them, with `unfolded` (writes the row's tables miss) applied in order. */
function stateOf(row: DecisionRow, unfolded: readonly OwnWrite[]): BotStorageState {
  const named = typeof row.named === 'string' ? (JSON.parse(row.named) as Record<string, number>) : row.named ?? {};
  const folded = { total_size: Number(row.size ?? 0), existing: new Map(Object.entries(named).map(([key, size]) => [key, Number(size)])) };
  return applyWrites(folded, unfolded.map((w) => w.event));
}

/**
 * The decision's row and state. The events of the storage stream the read tables do not include
 * yet are, when they are all this process's own writes (a bot writing once per message), applied
 * to the state from memory: a write needs no fold of the one before, one statement. Any other
 * unfolded event (another process wrote) is waited for before asking again. Every write a process
 * decides was decided on every event before it, so this process's unfolded writes follow each
 * other in the stream with nothing between them.
 */
async function decisionState(ctx: ServiceContext, userId: number, keys: string[], everyKey: boolean): Promise<{ row: DecisionRow; state: BotStorageState }> {
  const own = ownWritesOf(ctx);
  for (;;) {
    const pending = own.get(userId) ?? [];
    const row = await readDecisionRow(ctx.db, userId, [...keys, ...pending.flatMap((w) => keysOf(w.event))], everyKey);
    const folded = Number(row.folded);
    const unfolded = pending.filter((w) => w.position > folded);
    if (unfolded.length > 0) own.set(userId, unfolded);
    else own.delete(userId);
    const last = row.position === null ? 0 : Number(row.position);
    if (last <= folded) return { row, state: stateOf(row, []) };
    const newest = unfolded[unfolded.length - 1];
    const ownRun = newest !== undefined && newest.position === last && newest.version === Number(row.stream_version)
      && unfolded.every((w, i) => w.version === newest.version - (unfolded.length - 1 - i));
    if (ownRun) return { row, state: stateOf(row, unfolded) };
    if (!(await ctx.waitForProjections(last))) throw errors.conflict();
  }
}

/**
 * What this process last decided a bot's storage was, with every key's size: the state after the
 * stream's event `version`, whose key generation is `generation`. A write decides on it with no
 * statement before its append; the append expects `version`, so a write another process made
 * since turns into a version conflict, and the retry reads the database. A refusal decided on it
 * is checked against the database too (the key it misses may have been written elsewhere).
 */
interface KnownStorage {
  version: number;
  generation: number;
  state: BotStorageState;
}

/** Per log and bot (see ownWritesByLog), at most KNOWN_BOTS of them, the least recently written dropped first. */
const knownByLog = new WeakMap<object, Map<number, KnownStorage>>();
const KNOWN_BOTS = 1_000;
const knownOf = (ctx: ServiceContext): Map<number, KnownStorage> => {
  let known = knownByLog.get(ctx.store);
  if (!known) knownByLog.set(ctx.store, (known = new Map()));
  return known;
};

function remember(ctx: ServiceContext, userId: number, known: KnownStorage): void {
  const all = knownOf(ctx);
  all.delete(userId);
  all.set(userId, known);
  if (all.size > KNOWN_BOTS) all.delete(all.keys().next().value!);
}

/** The version, generation and state (every key's size) the database gives, as decisionState reads them. */
async function readKnown(ctx: ServiceContext, userId: number): Promise<KnownStorage> {
  const { row, state } = await decisionState(ctx, userId, [], true);
  const version = Number(row.stream_version ?? 0);
  // After a forgetting (or on events older than sealing) the generation is counted.
  const generation = row.type === null ? 0
    : row.type !== 'BotStorageForgotten' && row.generation !== null ? Number(row.generation) : await keyGeneration(ctx.db, userId);
  return { version, generation, state };
}

/** `everyKey`: a removal of every key there is when it is decided (no keys named). */
function runBotStorage(ctx: ServiceContext, meta: RequestMeta, command: BotStorageCommand, everyKey = false): Promise<void> {
  return writes.run(command.user_id, async () => {
    const streamId = botStorageStream(command.user_id);
    let attempt = 0;
    let decided: KnownStorage | undefined;
    const { events } = await ctx.commands.run(metadataOf(meta), async () => {
      // The first attempt trusts what this process knows; a retry (a version conflict) reads afresh.
      const remembered = attempt++ === 0 ? knownOf(ctx).get(command.user_id) : undefined;
      const decide = (known: KnownStorage) => {
        const resolved: BotStorageCommand = command.type === 'RemoveBotStorage' && everyKey ? { ...command, keys: [...known.state.existing.keys()] } : command;
        return decideBotStorage(resolved, known.state).map((e) => ({ ...e, data: { ...e.data, key_generation: known.generation } }));
      };
      let known = remembered ?? (await readKnown(ctx, command.user_id));
      let decidedEvents;
      try {
        decidedEvents = decide(known);
      } catch (error) {
        if (!remembered) throw error;
        known = await readKnown(ctx, command.user_id);
        decidedEvents = decide(known);
      }
      decided = known;
      return { appends: [{ streamId, expectedVersion: known.version === 0 ? -1 : known.version, events: decidedEvents }], result: undefined };
      // GET /bot_storage first waits for the fold of the stream's last event, and the next write
      // decides with this one applied, so the answer need not.
    }, { answerAt: 'committed' });
    const own = ownWritesOf(ctx);
    const written = events.map((e) => ({ position: e.position, version: e.stream_version, event: e as unknown as OwnWrite['event'] }));
    if (written.length > 0) own.set(command.user_id, [...(own.get(command.user_id) ?? []), ...written]);
    if (decided) {
      const last = written[written.length - 1];
      remember(ctx, command.user_id, last
        ? { version: last.version, generation: decided.generation, state: applyWrites(decided.state, written.map((w) => w.event)) }
        : decided);
    }
  });
}

export function setBotStorage(ctx: ServiceContext, meta: RequestMeta, userId: number, storage: Record<string, string>): Promise<void> {
  return runBotStorage(ctx, meta, { type: 'SetBotStorage', user_id: userId, storage });
}

/** Removes the named keys, or every key when `keys` is absent (an empty list removes nothing). */
export function removeBotStorage(ctx: ServiceContext, meta: RequestMeta, userId: number, keys: string[] | undefined): Promise<void> {
  return runBotStorage(ctx, meta, { type: 'RemoveBotStorage', user_id: userId, keys: keys ?? [] }, keys === undefined);
}

/** The key generation new writes are sealed under: one more than the times the storage was forgotten. */
async function keyGeneration(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('stream_id', '=', botStorageStream(userId))
    .where('type', '=', 'BotStorageForgotten')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Forgets a deactivated bot's storage: destroys the data key of its current generation (first, as
 * shredding does: killed in between, the next deactivation finds the stream unforgotten and goes
 * again), then appends BotStorageForgotten, whose fold empties its rows. Nothing to do when the
 * bot stored nothing since it was last forgotten.
 */
export function forgetBotStorage(ctx: ServiceContext, meta: RequestMeta, userId: number): Promise<boolean> {
  return writes.run(userId, async () => {
    const streamId = botStorageStream(userId);
    const last = await ctx.db.selectFrom('events').select(['type', 'stream_version']).where('stream_id', '=', streamId)
      .orderBy('stream_version', 'desc').limit(1).executeTakeFirst();
    knownOf(ctx).delete(userId);
    if (!last || last.type === 'BotStorageForgotten') return false;
    const generation = await keyGeneration(ctx.db, userId);
    // Only the current generation's key: earlier generations' keys went when they were forgotten.
    const keyIds = [botStorageKeyId(userId, generation)];
    if (ctx.store.crypto) await ctx.store.crypto.keys.destroy(keyIds);
    else await sql`DELETE FROM data_keys WHERE key_id = ANY(${keyIds}::text[])`.execute(ctx.db);
    const event: BotStorageForgotten = { type: 'BotStorageForgotten', data: { user_id: userId, key_ids: keyIds, reason: 'bot_deactivated' } };
    await ctx.commands.run(metadataOf(meta), async () => {
      const version = await streamVersion(ctx, streamId);
      return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events: [event] }], result: undefined };
    });
    return true;
  });
}
