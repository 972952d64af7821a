import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import type { DataOf } from '../src/domain/events.js';
import { FlagBit } from '../src/domain/messages/flags.js';
import { runPrepared } from '../src/db/prepared.js';
import { defineProjection } from './define.js';
import { foldMessagesSent, foldReactions, sentMessageFlags } from './messages-bulk.js';
import { clearFlagBits, clearFlagBitsCtes, foldFlagChange, foldFlagChanges, setBits } from './message-flags.js';

/** The newest message id (0 with none), as a subquery. */
const LAST_MESSAGE_ID = sql<number>`(SELECT COALESCE(max(id), 0) FROM messages)`;

async function lastMessageId(trx: Trx): Promise<number> {
  const { rows } = await runPrepared(trx, sql<{ m: number }>`SELECT ${LAST_MESSAGE_ID} AS m`);
  return Number(rows[0]!.m);
}

type Span = { user_id: number; from_id: number; to_id: number | null };
const covers = (s: Span, id: number) => s.from_id <= id && (s.to_id === null || s.to_id >= id);

/**
 * Messages moving from channel `from` to channel `to`, as the real server moves UserMessage rows:
 * afterwards exactly the current subscribers of `to` (and the sender) have received them. Those
 * who had not get them as read; those who had and are not subscribed to `to` lose them with their
 * flags. Where the spans of `to` would say otherwise, a message_moved_receptions row records the
 * answer. Everything here comes from the messages projection's own tables, so a rebuild agrees.
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
  const rows: Array<{ user_id: number; message_id: number; received: boolean }> = [];
  const gained = new Map<number, number[]>();
  const lost = new Map<number, number[]>();
  for (const id of ids) {
    const sender = senders.get(id);
    const override = new Map(overrides.filter((o) => o.message_id === id).map((o) => [o.user_id, o.received]));
    const before = new Set(oldSpans.filter((s) => covers(s, id) && override.get(s.user_id) !== false).map((s) => s.user_id));
    for (const [u, received] of override) if (received) before.add(u);
    const byDefault = new Set(newSpans.filter((s) => covers(s, id)).map((s) => s.user_id));
    for (const u of current) {
      if (u === sender) continue;
      if (!byDefault.has(u)) rows.push({ user_id: u, message_id: id, received: true });
      if (!before.has(u)) gained.set(u, [...(gained.get(u) ?? []), id]);
    }
    for (const u of byDefault) if (u !== sender && !current.has(u)) rows.push({ user_id: u, message_id: id, received: false });
    for (const u of before) if (u !== sender && !current.has(u)) lost.set(u, [...(lost.get(u) ?? []), id]);
  }
  await trx.deleteFrom('message_moved_receptions').where('message_id', 'in', ids).execute();
  for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('message_moved_receptions').values(rows.slice(i, i + 1000)).execute();
  for (const [u, got] of [...gained].sort((a, b) => a[0] - b[0])) await setBits(trx, u, got, FlagBit.READ, FlagBit.UNREAD);
  for (const [u, gone] of [...lost].sort((a, b) => a[0] - b[0])) await trx.deleteFrom('message_flags').where('user_id', '=', u).where('message_id', 'in', gone).execute();
}

type MessageEditedData = DataOf<'MessageEdited'>;

/** The columns a content edit sets on the edited message. */
function contentColumns(d: MessageEditedData): Record<string, unknown> {
  return {
    content: d.content,
    rendered_content: d.rendered_content,
    is_me_message: d.is_me_message,
    has_link: d.has_link,
    has_image: d.has_image,
    has_attachment: d.has_attachment,
    stream_wildcard: d.stream_wildcard,
    topic_wildcard: d.topic_wildcard,
  };
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
function editsInPlace(d: MessageEditedData): boolean {
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

export const messagesProjection = defineProjection({
  name: 'messages',
  version: 5,
  tables: ['messages', 'message_recipients', 'message_dm_recipients', 'message_reception_spans', 'message_moved_receptions', 'message_flags', 'message_read_state', 'reactions'],
  // Narrows and search; every fold finds messages by id.
  queryIndexes: ['messages_search_idx', 'messages_stream_topic_idx', 'messages_stream_idx', 'messages_sender_idx', 'messages_dm_idx', 'messages_realm_idx'],
  bulk: { MessageSent: foldMessagesSent, ReactionAdded: foldReactions, ReactionRemoved: foldReactions, MessageFlagsChanged: foldFlagChanges },
  // Reactions write reactions and messages.version; flag changes write the READ/UNREAD/STARRED/
  // COLLAPSED bits and the watermark, reading only messages' recipients; in-place edits write
  // content, history and the MENTIONED/TOPIC_WILDCARD bits. Bits are independent and a row goes
  // exactly when its last bit does, and versions only grow (GREATEST), so the groups commute.
  commutingGroups: [['ReactionAdded', 'ReactionRemoved'], ['MessageFlagsChanged'], ['MessageEdited']],
  // What each of these folds reads and writes is keyed by the message ids below (the flag folds' read
  // compaction looks no further than the highest id changed); moves and everything else may not be.
  messagesTouched: {
    ReactionAdded: (d) => d.message_id,
    ReactionRemoved: (d) => d.message_id,
    MessageFlagsChanged: (d) => d.message_ids.reduce((highest, id) => Math.max(highest, id), d.read_through ?? 0),
    MessageEdited: (d) => (editsInPlace(d) ? d.message_id : undefined),
  },
  handlers: {
    MessageSent: async (trx, d, e) => {
      const bits = sentMessageFlags(d);
      // One statement for every row a message writes: sending is the hot path of the fold.
      const ctes = [
        sql`rec AS (INSERT INTO message_recipients (id, key) VALUES (${d.recipient_id}, ${d.recipient_key}) ON CONFLICT DO NOTHING)`,
        sql`fl AS (INSERT INTO message_flags (user_id, message_id, flags) VALUES ${sql.join([...bits].map(([u, f]) => sql`(${u}, ${d.message_id}, ${f})`))}
          ON CONFLICT (user_id, message_id) DO UPDATE SET flags = excluded.flags)`,
      ];
      if (d.dm_user_ids.length > 0) {
        ctes.push(sql`dm AS (INSERT INTO message_dm_recipients (user_id, message_id) VALUES ${sql.join(d.dm_user_ids.map((u) => sql`(${u}, ${d.message_id})`))}
          ON CONFLICT DO NOTHING)`);
      }
      await sql`WITH ${sql.join(ctes)}
        INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
          is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
        VALUES (${d.message_id}, ${d.realm_id}, ${d.stream_id}, ${d.topic}, ${d.sender_id}, ${d.date_sent}, ${d.content}, ${d.rendered_content},
          ${d.recipient_id}, ${d.stream_id === null ? d.dm_user_ids.join(',') : null}, ${d.client}, ${d.is_me_message}, ${d.has_link},
          ${d.has_image}, ${d.has_attachment}, ${d.stream_wildcard}, ${d.topic_wildcard}, NULL, NULL, ${e.stream_version})`.execute(trx);
    },
    MessageEdited: async (trx, d, e) => {
      // Both clear the message's topic wildcard bits when its content changed; set again here.
      const found = editsInPlace(d) ? await editInPlace(trx, d, e.stream_version) : await editAndMove(trx, d, e.stream_version);
      if (!found) return;
      if (d.content !== null) {
        for (const id of d.topic_wildcard_user_ids ?? []) await setBits(trx, id, [d.message_id], FlagBit.TOPIC_WILDCARD);
      }
      if (d.mentioned_user_ids !== null) {
        const before = new Set(d.prev_mentioned_user_ids ?? []);
        const after = new Set(d.mentioned_user_ids);
        for (const id of after) if (!before.has(id)) await setBits(trx, id, [d.message_id], FlagBit.MENTIONED);
        for (const id of before) if (!after.has(id)) await setBits(trx, id, [d.message_id], 0, FlagBit.MENTIONED);
      }
    },
    MessagesDeleted: async (trx, d) => {
      if (d.message_ids.length === 0) return;
      await trx.deleteFrom('messages').where('id', 'in', d.message_ids).execute();
      await trx.deleteFrom('message_flags').where('message_id', 'in', d.message_ids).execute();
      await trx.deleteFrom('message_dm_recipients').where('message_id', 'in', d.message_ids).execute();
      await trx.deleteFrom('message_moved_receptions').where('message_id', 'in', d.message_ids).execute();
      await trx.deleteFrom('reactions').where('message_id', 'in', d.message_ids).execute();
    },
    // Reactions and the message's version are different tables: one statement each.
    ReactionAdded: async (trx, d, e) => {
      await runPrepared(trx, sql`WITH added AS (
          INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type, position)
          VALUES (${d.message_id}, ${d.user_id}, ${d.emoji_name}, ${d.emoji_code}, ${d.reaction_type}, ${e.position})
          ON CONFLICT DO NOTHING
        )
        UPDATE messages SET version = GREATEST(version, ${e.stream_version}::int) WHERE id = ${d.message_id}`);
    },
    ReactionRemoved: async (trx, d, e) => {
      await runPrepared(trx, sql`WITH removed AS (
          DELETE FROM reactions
          WHERE message_id = ${d.message_id} AND user_id = ${d.user_id} AND reaction_type = ${d.reaction_type} AND emoji_code = ${d.emoji_code}
        )
        UPDATE messages SET version = GREATEST(version, ${e.stream_version}::int) WHERE id = ${d.message_id}`);
    },
    MessageFlagsChanged: foldFlagChange,
    // Nothing sent before a user existed can be unread for them: the watermark starts at the head.
    UserCreated: async (trx, d) => {
      await trx
        .insertInto('message_read_state')
        .values({ user_id: d.user_id, read_through: await lastMessageId(trx) })
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
    // A span opens after the newest message, unless one is open already; one statement each way.
    UserSubscribed: async (trx, d) => {
      await runPrepared(trx, sql`INSERT INTO message_reception_spans (user_id, stream_id, from_id, to_id)
        SELECT ${d.user_id}::int, ${d.stream_id}::int, ${LAST_MESSAGE_ID} + 1, NULL
        WHERE NOT EXISTS (SELECT 1 FROM message_reception_spans
          WHERE user_id = ${d.user_id}::int AND stream_id = ${d.stream_id}::int AND to_id IS NULL)`);
    },
    UserUnsubscribed: async (trx, d) => {
      await runPrepared(trx, sql`UPDATE message_reception_spans SET to_id = ${LAST_MESSAGE_ID}
        WHERE user_id = ${d.user_id}::int AND stream_id = ${d.stream_id}::int AND to_id IS NULL`);
    },
    StreamArchived: async (trx, d) => {
      await trx
        .updateTable('message_reception_spans')
        .set({ to_id: await lastMessageId(trx) })
        .where('stream_id', '=', d.stream_id)
        .where('to_id', 'is', null)
        .execute();
    },
  },
});
