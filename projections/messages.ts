import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import { ridesWithNext, runPrepared } from '../src/db/prepared.js';
import { defineProjection } from './define.js';
import { foldMessagesSent, foldReactions, sentMessageFlags } from './messages-bulk.js';
import { foldFlagChange, foldFlagChanges } from './message-flags.js';
import { editsInPlace, foldEdit, foldEdits } from './message-edits.js';

/** The newest message id (0 with none), as a subquery. */
const LAST_MESSAGE_ID = sql<number>`(SELECT COALESCE(max(id), 0) FROM messages)`;

async function lastMessageId(trx: Trx): Promise<number> {
  const { rows } = await runPrepared(trx, sql<{ m: number }>`SELECT ${LAST_MESSAGE_ID} AS m`);
  return Number(rows[0]!.m);
}

async function deleteMessageRows(trx: Trx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await trx.deleteFrom('messages').where('id', 'in', ids).execute();
  await trx.deleteFrom('message_flags').where('message_id', 'in', ids).execute();
  await trx.deleteFrom('message_dm_recipients').where('message_id', 'in', ids).execute();
  await trx.deleteFrom('message_moved_receptions').where('message_id', 'in', ids).execute();
  await trx.deleteFrom('reactions').where('message_id', 'in', ids).execute();
}

export const messagesProjection = defineProjection({
  name: 'messages',
  version: 6,
  tables: ['messages', 'message_recipients', 'message_dm_recipients', 'message_reception_spans', 'message_moved_receptions', 'message_flags', 'message_read_state', 'reactions'],
  // Narrows and search; every fold finds messages by id.
  queryIndexes: ['messages_search_idx', 'messages_stream_topic_idx', 'messages_stream_idx', 'messages_sender_idx', 'messages_dm_idx', 'messages_realm_idx'],
  bulk: { MessageSent: foldMessagesSent, ReactionAdded: foldReactions, ReactionRemoved: foldReactions, MessageFlagsChanged: foldFlagChanges, MessageEdited: foldEdits },
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
      // Nothing reads its result: it rides with the pass's next statement (or its COMMIT).
      await ridesWithNext(trx, sql`WITH ${sql.join(ctes)}
        INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
          is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
        VALUES (${d.message_id}, ${d.realm_id}, ${d.stream_id}, ${d.topic}, ${d.sender_id}, ${d.date_sent}, ${d.content}, ${d.rendered_content},
          ${d.recipient_id}, ${d.stream_id === null ? d.dm_user_ids.join(',') : null}, ${d.client}, ${d.is_me_message}, ${d.has_link},
          ${d.has_image}, ${d.has_attachment}, ${d.stream_wildcard}, ${d.topic_wildcard}, NULL, NULL, ${e.stream_version})`);
    },
    MessageEdited: (trx, d, e) => foldEdit(trx, d, e.stream_version),
    MessagesDeleted: (trx, d) => deleteMessageRows(trx, d.message_ids),
    // Retention and erasure shred live messages: their rows (content, topic, search text) go too.
    MessagesShredded: (trx, d) => deleteMessageRows(trx, d.message_ids),
    // Reactions and the message's version are different tables: one statement each.
    ReactionAdded: async (trx, d, e) => {
      await ridesWithNext(trx, sql`WITH added AS (
          INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type, position)
          VALUES (${d.message_id}, ${d.user_id}, ${d.emoji_name}, ${d.emoji_code}, ${d.reaction_type}, ${e.position})
          ON CONFLICT DO NOTHING
        )
        UPDATE messages SET version = GREATEST(version, ${e.stream_version}::int) WHERE id = ${d.message_id}`, { prepared: true });
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
