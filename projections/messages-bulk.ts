import { sql } from 'kysely';
import type { FoldMemory, Trx } from '../src/projections-api.js';
import { FlagBit } from '../src/domain/messages/flags.js';
import type { RunEvent } from './define.js';
import { ridesWithNext, runPrepared } from '../src/db/prepared.js';
import type { DataOf } from '../src/domain/events.js';

/**
 * Bulk folds of the messages projection (see define.ts): a run of events written with a few
 * set-based statements instead of a few statements per event. Each must leave the tables exactly
 * as the one-event handlers in messages.ts do; test/projections/bulk-fold.test.ts compares them.
 * Rows travel as one json parameter (json_to_recordset reads it without building jsonb first), so a
 * run of any length fits in one statement.
 */

/** Messages per statement: bounds the size of its json parameters. */
const CHUNK = 2_000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** MessageSent: the messages, their flags, recipients and DM recipients of the whole run. */
/** The per-user flag rows a sent message starts with: the sender's read state, mentions, alert words. */
export function sentMessageFlags(d: DataOf<'MessageSent'>): Map<number, number> {
  const bits = new Map<number, number>();
  const add = (userId: number, bit: number) => bits.set(userId, (bits.get(userId) ?? 0) | bit);
  add(d.sender_id, d.read_by_sender ? FlagBit.READ : FlagBit.UNREAD);
  for (const id of d.mentioned_user_ids) add(id, FlagBit.MENTIONED);
  for (const id of d.alerted_user_ids) add(id, FlagBit.HAS_ALERT_WORD);
  for (const id of d.muter_user_ids ?? []) add(id, FlagBit.READ);
  for (const id of d.read_for_user_ids ?? []) add(id, FlagBit.READ);
  for (const id of d.topic_wildcard_user_ids ?? []) add(id, FlagBit.TOPIC_WILDCARD);
  return bits;
}

export async function foldMessagesSent(trx: Trx, run: ReadonlyArray<RunEvent<'MessageSent'>>): Promise<void> {
  for (const part of chunks(run)) await foldMessagesSentPart(trx, part);
}

/** One statement (as the one-event handler) for every row of up to CHUNK messages. */
async function foldMessagesSentPart(trx: Trx, run: ReadonlyArray<RunEvent<'MessageSent'>>): Promise<void> {
  const recipients: Array<{ id: number; key: string; n: number }> = [];
  const seenRecipients = new Set<string>();
  const flags: Array<{ u: number; m: number; f: number }> = [];
  const dms: Array<{ u: number; m: number }> = [];
  const messages: Array<Record<string, unknown>> = [];
  for (const { data: d, event: e } of run) {
    const recipient = `${d.recipient_id}:${d.recipient_key}`;
    if (!seenRecipients.has(recipient)) {
      seenRecipients.add(recipient);
      recipients.push({ id: d.recipient_id, key: d.recipient_key, n: recipients.length });
    }
    for (const [u, f] of sentMessageFlags(d)) flags.push({ u, m: d.message_id, f });
    for (const u of new Set(d.dm_user_ids)) dms.push({ u, m: d.message_id });
    messages.push({
      id: d.message_id, realm_id: d.realm_id, stream_id: d.stream_id, topic: d.topic, sender_id: d.sender_id, date_sent: d.date_sent,
      content: d.content, rendered_content: d.rendered_content, recipient_id: d.recipient_id,
      dm_key: d.stream_id === null ? d.dm_user_ids.join(',') : null, client: d.client, is_me_message: d.is_me_message,
      has_link: d.has_link, has_image: d.has_image, has_attachment: d.has_attachment, stream_wildcard: d.stream_wildcard,
      topic_wildcard: d.topic_wildcard, version: e.stream_version,
    });
  }
  // Message ids are distinct within a run, so no (user, message) pair comes twice in one statement.
  // Nothing reads its result: it rides with the pass's next statement (or its COMMIT).
  await ridesWithNext(trx, sql`WITH rec AS (
      INSERT INTO message_recipients (id, key)
      SELECT r.id, r.key FROM json_to_recordset(${JSON.stringify(recipients)}::json) AS r(id int, key text, n int)
      ORDER BY r.n ON CONFLICT DO NOTHING),
    fl AS (
      INSERT INTO message_flags (user_id, message_id, flags)
      SELECT u, m, f FROM json_to_recordset(${JSON.stringify(flags)}::json) AS x(u int, m int, f int)
      ON CONFLICT (user_id, message_id) DO UPDATE SET flags = excluded.flags),
    dm AS (
      INSERT INTO message_dm_recipients (user_id, message_id)
      SELECT u, m FROM json_to_recordset(${JSON.stringify(dms)}::json) AS x(u int, m int)
      ON CONFLICT DO NOTHING)
    INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
        is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
      SELECT id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
        is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, NULL, NULL, version
      FROM json_to_recordset(${JSON.stringify(messages)}::json) AS x(id int, realm_id int, stream_id int, topic text, sender_id int,
        date_sent int8, content text, rendered_content text, recipient_id int, dm_key text, client text, is_me_message bool,
        has_link bool, has_image bool, has_attachment bool, stream_wildcard bool, topic_wildcard bool, version int)`, { prepared: true });
}

export const firstMessageKey = (streamId: number): string => `first message of ${streamId}`;

/**
 * Whether the channel's first message id is known (FoldMemory) to be set and at most `messageId`:
 * then a send of that id cannot change it, and its update is skipped (a round trip per send).
 */
export function firstMessageKnownAtMost(memory: FoldMemory, streamId: number, messageId: number): boolean {
  const bound = memory.get(firstMessageKey(streamId));
  return typeof bound === 'number' && bound <= messageId;
}

/** After the update for a send of `messageId`, the first message id is at most that. */
export function rememberFirstMessageAtMost(memory: FoldMemory, streamId: number, messageId: number): void {
  memory.set(firstMessageKey(streamId), messageId);
}

/** The one-event channels fold of MessageSent, for a run: each channel's first message id. */
export async function foldFirstMessageIds(trx: Trx, run: ReadonlyArray<RunEvent<'MessageSent'>>, memory: FoldMemory): Promise<'unchanged' | void> {
  const first = new Map<number, number>();
  for (const { data: d } of run) {
    if (d.stream_id === null) continue;
    first.set(d.stream_id, Math.min(first.get(d.stream_id) ?? d.message_id, d.message_id));
  }
  for (const [streamId, messageId] of first) if (firstMessageKnownAtMost(memory, streamId, messageId)) first.delete(streamId);
  if (first.size === 0) return 'unchanged';
  const streams = [...first.keys()];
  const firsts = [...first.values()];
  // No join (each stream's id finds its message id by position in the arrays): a key look-up, prepared.
  const candidate = sql`(${firsts}::int[])[array_position(${streams}::int[], id)]`;
  const result = await runPrepared(trx, sql`UPDATE streams SET first_message_id = ${candidate}
    WHERE id = ANY(${streams}::int[]) AND (first_message_id IS NULL OR first_message_id > ${candidate})`);
  for (const [streamId, messageId] of first) rememberFirstMessageAtMost(memory, streamId, messageId);
  return (result.numAffectedRows ?? 0n) > 0n ? undefined : 'unchanged';
}

/**
 * A run of ReactionAdded and ReactionRemoved in log order, as the one-event folds leave it: a
 * reaction removed in the run is deleted, then the first add after its last removal (if any) goes
 * in; a reaction only added in the run is inserted by its first add unless it is already there (ON
 * CONFLICT DO NOTHING, as event by event). Each message's version becomes its highest in the run.
 */
type ReactionEvent = RunEvent<'ReactionAdded'> | RunEvent<'ReactionRemoved'>;

export async function foldReactions(trx: Trx, run: readonly ReactionEvent[]): Promise<void> {
  for (const part of chunks(run)) {
    const removed = new Map<string, { m: number; u: number; c: string; t: string }>();
    const adds = new Map<string, ReactionEvent>();
    const versions = new Map<number, number>();
    for (const item of part) {
      const { data: d, event: e } = item;
      const key = JSON.stringify([d.message_id, d.user_id, d.reaction_type, d.emoji_code]);
      if (e.type === 'ReactionRemoved') {
        removed.set(key, { m: d.message_id, u: d.user_id, c: d.emoji_code, t: d.reaction_type });
        adds.delete(key);
      } else if (!adds.has(key)) adds.set(key, item);
      versions.set(d.message_id, Math.max(versions.get(d.message_id) ?? 0, e.stream_version));
    }
    // The removals first, in a statement of their own: an insert in the same statement would still
    // see the rows they delete and skip its own.
    if (removed.size > 0) {
      await sql`DELETE FROM reactions USING json_to_recordset(${JSON.stringify([...removed.values()])}::json) AS x(m int, u int, c text, t text)
        WHERE reactions.message_id = x.m AND reactions.user_id = x.u AND reactions.reaction_type = x.t AND reactions.emoji_code = x.c`.execute(trx);
    }
    const reactions = [...adds.values()].map(({ data: d, event: e }) => ({
      m: d.message_id, u: d.user_id, n: d.emoji_name, c: d.emoji_code, t: d.reaction_type, p: e.position,
    }));
    const last = [...versions].map(([m, v]) => ({ m, v }));
    // Not prepared: a join with messages, whose generic plan (made while the table was small)
    // scanned it whole on every call.
    await ridesWithNext(trx, sql`WITH added AS (
        INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type, position)
        SELECT m, u, n, c, t, p FROM json_to_recordset(${JSON.stringify(reactions)}::json) AS x(m int, u int, n text, c text, t text, p int8)
        ORDER BY p
        ON CONFLICT DO NOTHING)
      UPDATE messages SET version = GREATEST(messages.version, last.v)
      FROM json_to_recordset(${JSON.stringify(last)}::json) AS last(m int, v int)
      WHERE messages.id = last.m`);
  }
}
