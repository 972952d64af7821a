import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import { FlagBit } from '../src/domain/messages/flags.js';
import { defineProjection } from './define.js';

async function setBits(trx: Trx, userId: number, messageIds: number[], set: number, clear = 0): Promise<void> {
  if (messageIds.length === 0) return;
  for (let i = 0; i < messageIds.length; i += 1000) {
    const ids = messageIds.slice(i, i + 1000);
    if (set !== 0) {
      await trx
        .insertInto('message_flags')
        .values(ids.map((message_id) => ({ user_id: userId, message_id, flags: set })))
        .onConflict((oc) =>
          oc.columns(['user_id', 'message_id']).doUpdateSet({ flags: sql`(message_flags.flags & ${~clear}) | ${set}` as never }),
        )
        .execute();
    } else {
      await trx
        .updateTable('message_flags')
        .set({ flags: sql`flags & ${~clear}` as never })
        .where('user_id', '=', userId)
        .where('message_id', 'in', ids)
        .execute();
    }
  }
  if (clear !== 0) await trx.deleteFrom('message_flags').where('user_id', '=', userId).where('flags', '=', 0).where('message_id', 'in', messageIds).execute();
}

async function lastMessageId(trx: Trx): Promise<number> {
  const row = await trx.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
  return Number(row?.m ?? 0);
}

export const messagesProjection = defineProjection({
  name: 'messages',
  version: 1,
  tables: ['messages', 'message_recipients', 'message_dm_recipients', 'message_reception_spans', 'message_flags', 'message_read_state', 'reactions'],
  handlers: {
    MessageSent: async (trx, d, e) => {
      await trx
        .insertInto('message_recipients')
        .values({ id: d.recipient_id, key: d.recipient_key })
        .onConflict((oc) => oc.doNothing())
        .execute();
      await trx
        .insertInto('messages')
        .values({
          id: d.message_id,
          realm_id: d.realm_id,
          stream_id: d.stream_id,
          topic: d.topic,
          sender_id: d.sender_id,
          date_sent: d.date_sent,
          content: d.content,
          rendered_content: d.rendered_content,
          recipient_id: d.recipient_id,
          dm_key: d.stream_id === null ? d.dm_user_ids.join(',') : null,
          client: d.client,
          is_me_message: d.is_me_message,
          has_link: d.has_link,
          has_image: d.has_image,
          has_attachment: d.has_attachment,
          stream_wildcard: d.stream_wildcard,
          topic_wildcard: d.topic_wildcard,
          last_edit_timestamp: null,
          edit_history: null,
          version: e.stream_version,
        })
        .execute();
      if (d.dm_user_ids.length > 0) {
        await trx
          .insertInto('message_dm_recipients')
          .values(d.dm_user_ids.map((user_id) => ({ user_id, message_id: d.message_id })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      const bits = new Map<number, number>();
      const add = (userId: number, bit: number) => bits.set(userId, (bits.get(userId) ?? 0) | bit);
      add(d.sender_id, d.read_by_sender ? FlagBit.READ : FlagBit.UNREAD);
      for (const id of d.mentioned_user_ids) add(id, FlagBit.MENTIONED);
      for (const id of d.alerted_user_ids) add(id, FlagBit.HAS_ALERT_WORD);
      await trx
        .insertInto('message_flags')
        .values([...bits].map(([user_id, flags]) => ({ user_id, message_id: d.message_id, flags })))
        .onConflict((oc) => oc.columns(['user_id', 'message_id']).doUpdateSet({ flags: sql`excluded.flags` as never }))
        .execute();
    },
    MessageEdited: async (trx, d, e) => {
      const anchor = await trx.selectFrom('messages').select(['edit_history', 'topic', 'stream_id']).where('id', '=', d.message_id).executeTakeFirst();
      if (!anchor) return;
      const moved = d.new_topic !== null || d.new_stream_id !== null;
      for (const id of d.message_ids) {
        const row = id === d.message_id ? anchor : await trx.selectFrom('messages').select(['edit_history', 'topic', 'stream_id']).where('id', '=', id).executeTakeFirst();
        if (!row) continue;
        const entry: Record<string, unknown> = { user_id: d.user_id, timestamp: d.edit_timestamp };
        const set: Record<string, unknown> = { last_edit_timestamp: d.edit_timestamp };
        if (id === d.message_id && d.content !== null) {
          entry.prev_content = d.prev_content;
          entry.prev_rendered_content = d.prev_rendered_content;
          entry.prev_rendered_content_version = 1;
          Object.assign(set, {
            content: d.content,
            rendered_content: d.rendered_content,
            is_me_message: d.is_me_message,
            has_link: d.has_link,
            has_image: d.has_image,
            has_attachment: d.has_attachment,
            stream_wildcard: d.stream_wildcard,
            topic_wildcard: d.topic_wildcard,
          });
        }
        if (moved) {
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
        }
        const history = [entry, ...((row.edit_history as Array<Record<string, unknown>> | null) ?? [])];
        set.edit_history = JSON.stringify(history);
        if (id === d.message_id) set.version = e.stream_version;
        await trx.updateTable('messages').set(set as never).where('id', '=', id).execute();
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
      await trx.deleteFrom('reactions').where('message_id', 'in', d.message_ids).execute();
    },
    ReactionAdded: async (trx, d, e) => {
      await trx
        .insertInto('reactions')
        .values({ ...d, position: e.position })
        .onConflict((oc) => oc.doNothing())
        .execute();
      await trx.updateTable('messages').set({ version: e.stream_version }).where('id', '=', d.message_id).execute();
    },
    ReactionRemoved: async (trx, d, e) => {
      await trx.updateTable('messages').set({ version: e.stream_version }).where('id', '=', d.message_id).execute();
      await trx
        .deleteFrom('reactions')
        .where('message_id', '=', d.message_id)
        .where('user_id', '=', d.user_id)
        .where('reaction_type', '=', d.reaction_type)
        .where('emoji_code', '=', d.emoji_code)
        .execute();
    },
    MessageFlagsChanged: async (trx, d) => {
      if (d.read_through !== null) {
        await trx
          .insertInto('message_read_state')
          .values({ user_id: d.user_id, read_through: d.read_through })
          .onConflict((oc) => oc.column('user_id').doUpdateSet({ read_through: sql`GREATEST(message_read_state.read_through, excluded.read_through)` as never }))
          .execute();
        // Below the watermark, read/unread exceptions are void.
        await trx
          .updateTable('message_flags')
          .set({ flags: sql`flags & ${~(FlagBit.READ | FlagBit.UNREAD)}` as never })
          .where('user_id', '=', d.user_id)
          .where('message_id', '<=', d.read_through)
          .where(sql<boolean>`flags & ${FlagBit.READ | FlagBit.UNREAD} <> 0`)
          .execute();
        await trx.deleteFrom('message_flags').where('user_id', '=', d.user_id).where('flags', '=', 0).execute();
        const extra = d.message_ids.filter((id) => id > d.read_through!);
        if (extra.length > 0) await setBits(trx, d.user_id, extra, FlagBit.READ, FlagBit.UNREAD);
        return;
      }
      const bit = d.flag === 'read' ? FlagBit.READ : d.flag === 'starred' ? FlagBit.STARRED : d.flag === 'collapsed' ? FlagBit.COLLAPSED : 0;
      if (bit === 0) return;
      if (bit === FlagBit.READ) {
        if (d.op === 'add') await setBits(trx, d.user_id, d.message_ids, FlagBit.READ, FlagBit.UNREAD);
        else await setBits(trx, d.user_id, d.message_ids, FlagBit.UNREAD, FlagBit.READ);
      } else if (d.op === 'add') await setBits(trx, d.user_id, d.message_ids, bit);
      else await setBits(trx, d.user_id, d.message_ids, 0, bit);
    },
    UserSubscribed: async (trx, d) => {
      const open = await trx
        .selectFrom('message_reception_spans')
        .select('from_id')
        .where('user_id', '=', d.user_id)
        .where('stream_id', '=', d.stream_id)
        .where('to_id', 'is', null)
        .executeTakeFirst();
      if (open) return;
      await trx
        .insertInto('message_reception_spans')
        .values({ user_id: d.user_id, stream_id: d.stream_id, from_id: (await lastMessageId(trx)) + 1, to_id: null })
        .execute();
    },
    UserUnsubscribed: async (trx, d) => {
      await trx
        .updateTable('message_reception_spans')
        .set({ to_id: await lastMessageId(trx) })
        .where('user_id', '=', d.user_id)
        .where('stream_id', '=', d.stream_id)
        .where('to_id', 'is', null)
        .execute();
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
