import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import type { DataOf } from '../src/domain/events.js';
import { FlagBit } from '../src/domain/messages/flags.js';
import { runPrepared } from '../src/db/prepared.js';
import type { RunEvent } from './define.js';
import { clearFlagBits, clearFlagBitsCtes, PendingBitChanges, setBits } from './message-flags.js';

/**
 * The messages projection's fold of MessageEdited: content and history in place, topic and
 * channel moves (with who received the moved messages), and the flag bits an edit changes.
 */

type Span = { user_id: number; from_id: number; to_id: number | null };
const covers = (s: Span, id: number) => s.from_id <= id && (s.to_id === null || s.to_id >= id);

/** The value of `key` in `map`, set to `empty` first when missing (lists grow in place: a move may touch thousands of messages). */
function addTo<K, V>(map: Map<K, V>, key: K, empty: V): V {
  const known = map.get(key);
  if (known !== undefined) return known;
  map.set(key, empty);
  return empty;
}

/**
 * Messages moving from channel `from` to channel `to`, as the real server moves UserMessage rows:
 * afterwards exactly the current subscribers of `to` have received them (and a sender never
 * subscribed to `from` keeps them, as the real server leaves their row alone). Those who had not
 * get them as read; those who had and are not subscribed to `to` lose them with their flags, the
 * sender included. Where the spans of `to` (or, for the sender, "sent it") would say otherwise, a
 * message_moved_receptions row records the answer. Everything here comes from the messages projection's own tables, so a rebuild agrees.
 */
async function moveReceptions(trx: Trx, ids: number[], from: number, to: number): Promise<void> {
  if (ids.length === 0) return;
  const min = Math.min(...ids);
  const max = Math.max(...ids);
  const spansOf = (streamId: number) => trx
    .selectFrom('message_reception_spans')
    .select(['user_id', 'from_id', 'to_id'])
    .where('stream_id', '=', streamId)
    .where((eb) => eb.or([eb('to_id', 'is', null), eb.and([eb('from_id', '<=', max), eb('to_id', '>=', min)])]))
    .execute();
  const oldSpans = await spansOf(from);
  const newSpans = await spansOf(to);
  const overrides = await trx.selectFrom('message_moved_receptions').select(['user_id', 'message_id', 'received']).where('message_id', 'in', ids).execute();
  const senders = new Map((await trx.selectFrom('messages').select(['id', 'sender_id']).where('id', 'in', ids).execute()).map((r) => [r.id, r.sender_id]));
  const current = new Set(newSpans.filter((s) => s.to_id === null).map((s) => s.user_id));
  // Senders ever subscribed to `from` lose the messages unless subscribed to `to` (the real server
  // deletes the UserMessage rows of all of the old channel's subscriptions, active or not).
  const senderIds = [...new Set(senders.values())].filter((u) => !current.has(u));
  const everInFrom = new Set(senderIds.length === 0 ? [] : (await trx.selectFrom('message_reception_spans').select('user_id').distinct()
    .where('stream_id', '=', from).where('user_id', 'in', senderIds).execute()).map((r) => r.user_id));
  const overridesOf = new Map<number, Map<number, boolean>>();
  for (const o of overrides) addTo(overridesOf, o.message_id, new Map()).set(o.user_id, o.received);
  const rows: Array<{ user_id: number; message_id: number; received: boolean }> = [];
  const gained = new Map<number, number[]>();
  const lost = new Map<number, number[]>();
  for (const id of ids) {
    const sender = senders.get(id);
    const override = overridesOf.get(id) ?? new Map<number, boolean>();
    const before = new Set(oldSpans.filter((s) => covers(s, id) && override.get(s.user_id) !== false).map((s) => s.user_id));
    for (const [u, received] of override) if (received) before.add(u);
    const byDefault = new Set(newSpans.filter((s) => covers(s, id)).map((s) => s.user_id));
    if (sender !== undefined) {
      // The sender has the message unless a row says otherwise (an earlier move took it away).
      const senderHad = override.get(sender) !== false;
      if (current.has(sender)) {
        if (!senderHad) addTo(gained, sender, []).push(id);
      } else if (everInFrom.has(sender) || !senderHad) {
        rows.push({ user_id: sender, message_id: id, received: false });
        if (senderHad) addTo(lost, sender, []).push(id);
      }
    }
    for (const u of current) {
      if (u === sender) continue;
      if (!byDefault.has(u)) rows.push({ user_id: u, message_id: id, received: true });
      if (!before.has(u)) addTo(gained, u, []).push(id);
    }
    for (const u of byDefault) if (u !== sender && !current.has(u)) rows.push({ user_id: u, message_id: id, received: false });
    for (const u of before) if (u !== sender && !current.has(u)) addTo(lost, u, []).push(id);
  }
  await trx.deleteFrom('message_moved_receptions').where('message_id', 'in', ids).execute();
  for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('message_moved_receptions').values(rows.slice(i, i + 1000)).execute();
  for (const [u, got] of [...gained].sort((a, b) => a[0] - b[0])) await setBits(trx, u, got, FlagBit.READ, FlagBit.UNREAD);
  for (const [u, gone] of [...lost].sort((a, b) => a[0] - b[0])) await trx.deleteFrom('message_flags').where('user_id', '=', u).where('message_id', 'in', gone).execute();
}

type MessageEditedData = DataOf<'MessageEdited'>;

/** The columns a content edit sets on the edited message, with their types. */
const CONTENT_COLUMNS = [
  ['content', 'text'], ['rendered_content', 'text'], ['is_me_message', 'bool'], ['has_link', 'bool'], ['has_image', 'bool'],
  ['has_attachment', 'bool'], ['stream_wildcard', 'bool'], ['topic_wildcard', 'bool'],
] as const;

/** The columns a content edit sets on the edited message. */
function contentColumns(d: MessageEditedData): Record<string, unknown> {
  return Object.fromEntries(CONTENT_COLUMNS.map(([column]) => [column, d[column]]));
}

/** The edit_history entry every edited message gets; content fields only on the message whose content changed. */
function historyEntry(d: MessageEditedData, withContent: boolean): Record<string, unknown> {
  const entry: Record<string, unknown> = { user_id: d.user_id, timestamp: d.edit_timestamp };
  if (withContent) {
    entry.prev_content = d.prev_content;
    entry.prev_rendered_content = d.prev_rendered_content;
    entry.prev_rendered_content_version = 1;
  }
  return entry;
}

/** An edit of one message's content or nothing but its history: no topic or channel move. */
export function editsInPlace(d: MessageEditedData): boolean {
  return d.new_topic === null && d.new_stream_id === null && d.message_ids.length === 1 && d.message_ids[0] === d.message_id;
}

/**
 * An edit of one message that moves nothing: the row and its history in one statement (the new
 * entry goes in front of the history in the database), with the clearing of the message's topic
 * wildcard bits when the content changed (rows of a message that is gone are gone too). False when
 * the message is gone.
 */
async function editInPlace(trx: Trx, d: MessageEditedData, version: number): Promise<boolean> {
  const set: Record<string, unknown> = {
    last_edit_timestamp: d.edit_timestamp,
    version: sql`GREATEST(version, ${version}::int)`,
    edit_history: sql`jsonb_build_array(${JSON.stringify(historyEntry(d, d.content !== null))}::jsonb) || COALESCE(edit_history, '[]'::jsonb)`,
    ...(d.content !== null ? contentColumns(d) : {}),
  };
  const edit = trx.updateTable('messages').set(set as never).where('id', '=', d.message_id).returning('id');
  if (d.content === null) return (await runPrepared(trx, edit)).rows.length > 0;
  const rows = sql`message_id = ${d.message_id}`;
  const { rows: edited } = await runPrepared(trx, sql<{ id: number }>`WITH ${clearFlagBitsCtes(FlagBit.TOPIC_WILDCARD, rows, rows)},
    edited AS (${edit}) SELECT id FROM edited`);
  return edited.length > 0;
}

/**
 * Any other edit: topic and channel moves, of one message or many, then the clearing of the edited
 * message's topic wildcard bits when its content changed. False when the edited message is gone.
 */
async function editAndMove(trx: Trx, d: MessageEditedData, version: number): Promise<boolean> {
  const rowOf = (id: number) => trx.selectFrom('messages').select(['edit_history', 'topic', 'stream_id']).where('id', '=', id).executeTakeFirst();
  const anchor = await rowOf(d.message_id);
  if (!anchor) return false;
  if (d.new_stream_id !== null && d.stream_id !== null) await moveReceptions(trx, d.message_ids, d.stream_id, d.new_stream_id);
  for (const id of d.message_ids) {
    const row = id === d.message_id ? anchor : await rowOf(id);
    if (!row) continue;
    const withContent = id === d.message_id && d.content !== null;
    const entry = historyEntry(d, withContent);
    const set: Record<string, unknown> = { last_edit_timestamp: d.edit_timestamp, ...(withContent ? contentColumns(d) : {}) };
    if (d.new_topic !== null && d.new_topic !== row.topic) {
      entry.prev_topic = row.topic;
      entry.topic = d.new_topic;
      set.topic = d.new_topic;
    }
    if (d.new_stream_id !== null && d.new_stream_id !== row.stream_id) {
      entry.prev_stream = row.stream_id;
      entry.stream = d.new_stream_id;
      set.stream_id = d.new_stream_id;
      set.recipient_id = sql`COALESCE((SELECT id FROM message_recipients WHERE key = ${`stream:${d.new_stream_id}`}), recipient_id)`;
    }
    set.edit_history = JSON.stringify([entry, ...((row.edit_history as Array<Record<string, unknown>> | null) ?? [])]);
    if (id === d.message_id) set.version = sql`GREATEST(version, ${version}::int)`;
    await trx.updateTable('messages').set(set as never).where('id', '=', id).execute();
  }
  if (d.content !== null) {
    const rows = sql`message_id = ${d.message_id}`;
    await clearFlagBits(trx, FlagBit.TOPIC_WILDCARD, rows, rows);
  }
  return true;
}

/** The flag bits an edit sets and clears: topic wildcard mentions of new content, mentions and alert words gained and lost. */
function editBitChanges(d: MessageEditedData, bits: PendingBitChanges): void {
  const ids = [d.message_id];
  if (d.content !== null) {
    for (const id of d.topic_wildcard_user_ids ?? []) bits.add(id, ids, { set: FlagBit.TOPIC_WILDCARD, clear: 0 });
  }
  if (d.mentioned_user_ids !== null) {
    const before = new Set(d.prev_mentioned_user_ids ?? []);
    const after = new Set(d.mentioned_user_ids);
    for (const id of after) if (!before.has(id)) bits.add(id, ids, { set: FlagBit.MENTIONED, clear: 0 });
    for (const id of before) if (!after.has(id)) bits.add(id, ids, { set: 0, clear: FlagBit.MENTIONED });
  }
  if (d.alerted_user_ids !== undefined) {
    const before = new Set(d.prev_alerted_user_ids ?? []);
    const after = new Set(d.alerted_user_ids);
    for (const id of after) if (!before.has(id)) bits.add(id, ids, { set: FlagBit.HAS_ALERT_WORD, clear: 0 });
    for (const id of before) if (!after.has(id)) bits.add(id, ids, { set: 0, clear: FlagBit.HAS_ALERT_WORD });
  }
}

/** The one-event fold of MessageEdited. */
export async function foldEdit(trx: Trx, d: MessageEditedData, version: number): Promise<void> {
  // Both clear the message's topic wildcard bits when its content changed; set again here.
  const found = editsInPlace(d) ? await editInPlace(trx, d, version) : await editAndMove(trx, d, version);
  if (!found) return;
  const bits = new PendingBitChanges();
  editBitChanges(d, bits);
  await bits.flush(trx);
}

/** Messages per statement of a bulk edit fold. */
const CHUNK = 1_000;

/**
 * A run of MessageEdited, as the one-event fold leaves it. In-place edits of distinct messages
 * touch distinct rows: they go together, each round in one statement for the rows and history
 * (the topic wildcard bits of changed content clear in the same statement, as editInPlace does)
 * and a few for the flag bits. An edit that moves, or a second edit of a message in the round,
 * ends the round; a move folds alone.
 */
export async function foldEdits(trx: Trx, run: ReadonlyArray<RunEvent<'MessageEdited'>>): Promise<void> {
  let round: Array<RunEvent<'MessageEdited'>> = [];
  const inRound = new Set<number>();
  const flush = async () => {
    for (let i = 0; i < round.length; i += CHUNK) await editRoundInPlace(trx, round.slice(i, i + CHUNK));
    round = [];
    inRound.clear();
  };
  for (const item of run) {
    const { data: d, event: e } = item;
    if (!editsInPlace(d)) {
      await flush();
      await foldEdit(trx, d, e.stream_version);
      continue;
    }
    if (inRound.has(d.message_id)) await flush();
    round.push(item);
    inRound.add(d.message_id);
  }
  await flush();
}

/** editInPlace and the bit changes of foldEdit for in-place edits of distinct messages. */
async function editRoundInPlace(trx: Trx, round: ReadonlyArray<RunEvent<'MessageEdited'>>): Promise<void> {
  const rows = round.map(({ data: d, event: e }) => ({
    id: d.message_id, ts: d.edit_timestamp, v: e.stream_version, entry: historyEntry(d, d.content !== null), c: d.content !== null,
    ...(d.content !== null ? contentColumns(d) : {}),
  }));
  const changedContent = round.filter(({ data: d }) => d.content !== null).map(({ data: d }) => d.message_id);
  const clearing = changedContent.length === 0 ? sql`` : sql`${clearFlagBitsCtes(FlagBit.TOPIC_WILDCARD, sql`message_id = ANY(${changedContent}::int[])`, sql`message_id = ANY(${changedContent}::int[])`)},`;
  const keep = (column: string) => sql`${sql.ref(column)} = CASE WHEN x.c THEN ${sql.ref(`x.${column}`)} ELSE ${sql.ref(`messages.${column}`)} END`;
  // Not prepared: a join with messages (see foldReactions in messages-bulk.ts).
  const { rows: edited } = await sql<{ id: number }>`WITH ${clearing}
    x AS MATERIALIZED (SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS x(id int, ts int8, v int, entry jsonb, c bool, ${sql.raw(CONTENT_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', '))}))
    UPDATE messages SET last_edit_timestamp = x.ts, version = GREATEST(messages.version, x.v),
      edit_history = jsonb_build_array(x.entry) || COALESCE(messages.edit_history, '[]'::jsonb),
      ${sql.join(CONTENT_COLUMNS.map(([column]) => keep(column)))}
    FROM x WHERE messages.id = x.id RETURNING messages.id`.execute(trx);
  const found = new Set(edited.map((r) => r.id));
  const bits = new PendingBitChanges();
  for (const { data: d } of round) if (found.has(d.message_id)) editBitChanges(d, bits);
  await bits.flush(trx);
}
