import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { DataOf } from '../../domain/events.js';
import { FlagBit, flagsOf } from '../../domain/messages/flags.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { apiEmail, type UserRow } from '../../read/users.js';
import { realmHost, type RealmRow } from '../../read/realm.js';
import { MAX_UNREAD_MESSAGES, maxReceivedMessageId, messageObject, readThroughOf, unreadMessages } from '../../read/messages.js';
import { receivedSql } from '../../read/narrow.js';
import { renderTopicLinks, type Linkifier } from '../../markdown/index.js';
import { messageReceiversJsonSql, streamHistoryIsProtected } from '../../visibility.js';
import type { ClientEvent, PreparedEvent } from '../types.js';
import { Role } from '../../domain/roles.js';

async function linkifiersOf(db: Db, realmId: number): Promise<Linkifier[]> {
  const rows = await db.selectFrom('linkifiers').select(['id', 'pattern', 'url_template']).where('realm_id', '=', realmId).orderBy('order').orderBy('id').execute();
  return rows.map((l) => ({ id: l.id, pattern: l.pattern, urlTemplate: l.url_template }));
}

/**
 * Who received each of `ids` (channel messages: subscription spans; DMs: the participants). Only
 * those users get events about the messages, and only about the ones they received.
 */
async function receiversByMessage(db: Db, streamId: number | null, dmUserIds: number[], ids: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (streamId === null) {
    for (const u of dmUserIds) out.set(u, [...ids]);
    return out;
  }
  if (ids.length === 0) return out;
  const bySpans = await spanReceivers(db, streamId, ids);
  // Messages moved in from another channel: explicit rows override the spans.
  const moved = await db.selectFrom('message_moved_receptions').select(['user_id', 'message_id', 'received']).where('message_id', 'in', ids).execute();
  return withOverrides(bySpans, moved);
}

/** A span answer corrected by message_moved_receptions rows: `received` adds a message for its user, not received takes it away. */
function withOverrides(bySpans: Map<number, number[]>, rows: ReadonlyArray<{ user_id: number; message_id: number; received: boolean }>): Map<number, number[]> {
  if (rows.length === 0) return bySpans;
  const out = new Map<number, number[]>();
  const lost = new Set(rows.filter((r) => !r.received).map((r) => `${r.user_id}:${r.message_id}`));
  const add = (userId: number, got: number[]) => {
    if (got.length > 0) out.set(userId, [...new Set([...(out.get(userId) ?? []), ...got])].sort((a, b) => a - b));
  };
  for (const [userId, got] of bySpans) add(userId, got.filter((id) => !lost.has(`${userId}:${id}`)));
  for (const r of rows) if (r.received) add(r.user_id, [r.message_id]);
  return out;
}

/** Who had received `ids` in channel `streamId` by its spans alone (the audience before a move out of it). */
async function spanReceivers(db: Db, streamId: number, ids: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  const spans = await db
    .selectFrom('message_reception_spans')
    .select(['user_id', 'from_id', 'to_id'])
    .where('stream_id', '=', streamId)
    .where('from_id', '<=', Math.max(...ids))
    .where((eb) => eb.or([eb('to_id', 'is', null), eb('to_id', '>=', Math.min(...ids))]))
    .execute();
  for (const s of spans) {
    const got = ids.filter((id) => s.from_id <= id && (s.to_id === null || s.to_id >= id));
    if (got.length > 0) out.set(s.user_id, [...new Set([...(out.get(s.user_id) ?? []), ...got])].sort((a, b) => a - b));
  }
  return out;
}

/** Whether a new message matches the narrow a queue registered with (the real server's narrow predicate). */
function matchesQueueNarrow(
  narrow: unknown[],
  m: { stream_id: number | null; stream_name: string; topic: string; sender_id: number; sender_emails: string[]; flags: string[] },
): boolean {
  for (const raw of narrow) {
    const term = raw as { operator?: unknown; operand?: unknown };
    const op = String(term.operator);
    const operand = term.operand;
    const text = String(operand).toLowerCase();
    switch (op) {
      case 'stream':
      case 'channel':
        if (m.stream_id === null || (String(m.stream_id) !== String(operand) && m.stream_name.toLowerCase() !== text)) return false;
        break;
      case 'topic':
      case 'subject':
        if (m.stream_id === null || m.topic.toLowerCase() !== text) return false;
        break;
      case 'sender':
        if (String(m.sender_id) !== String(operand) && !m.sender_emails.includes(text)) return false;
        break;
      case 'is':
        if ((text === 'private' || text === 'dm') && m.stream_id !== null) return false;
        if (text === 'mentioned' && !m.flags.some((f) => f.endsWith('mentioned'))) return false;
        if (text === 'alerted' && !m.flags.includes('has_alert_word')) return false;
        if (text === 'starred') return false;
        break;
      default:
        break;
    }
  }
  return true;
}

registerTranslator('MessageSent', async (event, db): Promise<PreparedEvent | null> => {
  const d = event.data as DataOf<'MessageSent'>;
  // Everything the event needs in one round trip: it is prepared once per message.
  const userIds = [...new Set([d.sender_id, ...d.dm_user_ids])];
  const { rows } = await sql<{ receivers: number[] | null; stream_name: string | null; realm: RealmRow | null; linkifiers: Linkifier[] | null; users: UserRow[] | null }>`
    SELECT
      ${d.stream_id === null ? sql`NULL` : messageReceiversJsonSql(d.stream_id, d.message_id)} AS receivers,
      (SELECT st.name FROM streams st WHERE st.id = ${d.stream_id}) AS stream_name,
      (SELECT row_to_json(r) FROM realms r WHERE r.id = ${d.realm_id}) AS realm,
      ${d.stream_id === null ? sql`NULL` : sql`(SELECT json_agg(json_build_object('id', l.id, 'pattern', l.pattern, 'urlTemplate', l.url_template)
        ORDER BY l."order", l.id) FROM linkifiers l WHERE l.realm_id = ${d.realm_id})`} AS linkifiers,
      (SELECT json_agg(row_to_json(u)) FROM users u WHERE u.id IN (${sql.join(userIds)})) AS users`.execute(db);
  const found = rows[0];
  if (!found?.realm) return null;
  // The closure below lives as long as the hub keeps this event: keep two strings, not the realm row.
  const host = realmHost(found.realm);
  const realmStr = found.realm.string_id;
  const audience = new Set<number>(d.stream_id === null ? d.dm_user_ids : [...(found.receivers ?? []), d.sender_id]);
  const users = found.users ?? [];
  const stream = found.stream_name === null ? undefined : { name: found.stream_name };
  const linkifiers = found.linkifiers ?? [];
  const byId = new Map(users.map((u) => [u.id, u]));
  const row = {
    id: d.message_id,
    stream_id: d.stream_id,
    topic: d.topic,
    content: d.content,
    rendered_content: d.rendered_content,
    recipient_id: d.recipient_id,
    sender_id: d.sender_id,
    client: d.client,
    is_me_message: d.is_me_message,
    date_sent: d.date_sent,
    last_edit_timestamp: null,
    edit_history: null,
  };
  const mentioned = new Set(d.mentioned_user_ids);
  const alerted = new Set(d.alerted_user_ids);
  // Those it arrives read for: receivers who muted the sender, and any the event names (a mover).
  const muters = new Set([...(d.muter_user_ids ?? []), ...(d.read_for_user_ids ?? [])]);
  const topicWildcard = new Set(d.topic_wildcard_user_ids ?? []);
  return {
    audience,
    forUser: (r) => {
      const message = messageObject(row, {
        sender: byId.get(d.sender_id),
        viewer: { user_id: r.user.id, role: r.user.role, realm_id: r.realm.id },
        host,
        realmStr,
        streamName: stream?.name ?? '',
        participants: d.dm_user_ids.map((id) => byId.get(id)!).filter(Boolean),
        applyMarkdown: r.queue.apply_markdown,
        clientGravatar: r.queue.client_gravatar,
        linkifiers,
        allowEditHistory: true,
      });
      if (d.widget_submessage_id !== undefined && typeof d.widget_content === 'string') {
        message.submessages = [{ msg_type: 'widget', content: d.widget_content, message_id: d.message_id, sender_id: d.sender_id, id: d.widget_submessage_id }];
      }
      let bits = 0;
      if (r.user.id === d.sender_id) bits |= d.read_by_sender ? FlagBit.READ : FlagBit.UNREAD;
      if (mentioned.has(r.user.id)) bits |= FlagBit.MENTIONED;
      if (alerted.has(r.user.id)) bits |= FlagBit.HAS_ALERT_WORD;
      if (muters.has(r.user.id)) bits |= FlagBit.READ;
      if (topicWildcard.has(r.user.id)) bits |= FlagBit.TOPIC_WILDCARD;
      const flags = flagsOf({
        userId: r.user.id,
        senderId: d.sender_id,
        messageId: d.message_id,
        readThrough: 0,
        bits,
        received: true,
        streamWildcard: d.stream_wildcard,
      });
      if (r.queue.narrow.length > 0 && !matchesQueueNarrow(r.queue.narrow, {
        stream_id: d.stream_id,
        stream_name: stream?.name ?? '',
        topic: d.topic,
        sender_id: d.sender_id,
        sender_emails: [String(message.sender_email).toLowerCase(), (byId.get(d.sender_id)?.delivery_email ?? '').toLowerCase()],
        flags,
      })) return [];
      const out: ClientEvent = { type: 'message', message, flags };
      // Only the sender's own queue: another user's queue id must not let a sender reach into it.
      if (d.local_id !== null && d.sender_queue_id === r.queueId && r.user.id === d.sender_id) out.local_message_id = d.local_id;
      return [out];
    },
  };
});

registerTranslator('MessageEdited', async (event, db): Promise<PreparedEvent | null> => {
  const d = event.data as DataOf<'MessageEdited'>;
  const movedOut = d.new_stream_id !== null && d.stream_id !== null && d.message_ids.length > 0;
  // After a move between channels the reception answer is the new channel's (the fold ran first).
  const receivers = await receiversByMessage(db, movedOut ? d.new_stream_id : d.stream_id, d.dm_user_ids, d.message_ids);
  // Who had the messages in the old channel and not any more: they keep seeing the messages (as
  // not received) where the new channel is public and they are no guests; otherwise the messages
  // are gone for them, as if deleted (the real server's delete_message to users losing access).
  const formerly = new Map<number, number[]>();
  const deletedFor = new Map<number, number[]>();
  if (movedOut) {
    const [spans, streams] = await Promise.all([
      spanReceivers(db, d.stream_id!, d.message_ids),
      db.selectFrom('streams').selectAll().where('id', 'in', [d.stream_id!, d.new_stream_id!]).execute(),
    ]);
    // Before this move: the old channel's spans (history, so the same now as then) with what an
    // earlier move of these messages wrote, as carried in the event (the fold has replaced those rows).
    const prior = d.prior_moved_receptions?.flatMap((p) => p.message_ids.map((id) => ({ user_id: p.user_id, message_id: id, received: p.received })));
    const before = prior === undefined ? spans : withOverrides(spans, prior);
    const from = streams.find((st) => st.id === d.stream_id);
    const target = streams.find((st) => st.id === d.new_stream_id);
    const leaving = [...before.keys()].filter((u) => !receivers.has(u));
    const arriving = [...receivers.keys()].filter((u) => !before.has(u));
    const changing = [...leaving, ...arriving];
    const guests = new Set(changing.length === 0 ? [] : (await db.selectFrom('users').select(['id', 'role']).where('id', 'in', changing).execute())
      .filter((u) => u.role === Role.GUEST).map((u) => u.id));
    for (const u of leaving) (target?.invite_only !== false || guests.has(u) ? deletedFor : formerly).set(u, before.get(u)!);
    // Guests new to a destination with shared history hear nothing, as on the real server (whose
    // clients would be confused by an update of messages they never had); there they get the
    // update only as current subscribers of an old channel with shared history. In a destination
    // with protected history they gain the messages and hear of it (real: new UserMessage rows).
    const newGuests = arriving.filter((u) => guests.has(u));
    if (newGuests.length > 0 && target && !streamHistoryIsProtected(target)) {
      const inOld = new Set(from && !streamHistoryIsProtected(from)
        ? (await db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', from.id).where('active', '=', true).where('user_id', 'in', newGuests).execute()).map((r) => r.user_id)
        : []);
      for (const u of newGuests) if (!inOld.has(u)) receivers.delete(u);
    }
  }
  const audience = new Set([...receivers.keys(), ...formerly.keys(), ...deletedFor.keys()]);
  const [stream, flagRows, readStates, linkifiers] = await Promise.all([
    d.stream_id === null ? Promise.resolve(undefined) : db.selectFrom('streams').select('name').where('id', '=', d.stream_id).executeTakeFirst(),
    db.selectFrom('message_flags').select(['user_id', 'flags']).where('message_id', '=', d.message_id).execute(),
    audience.size === 0 ? Promise.resolve([]) : db.selectFrom('message_read_state').select(['user_id', 'read_through']).where('user_id', 'in', [...audience]).execute(),
    linkifiersOf(db, d.realm_id),
  ]);
  const bitsOf = new Map(flagRows.map((f) => [f.user_id, f.flags]));
  const readThrough = new Map(readStates.map((s) => [s.user_id, s.read_through]));
  const current = await db.selectFrom('messages').select(['stream_wildcard']).where('id', '=', d.message_id).executeTakeFirst();
  return {
    audience,
    forUser: (r) => {
      const gone = deletedFor.get(r.user.id);
      if (gone) {
        const base = { type: 'delete_message', message_type: 'stream', stream_id: d.stream_id, topic: d.orig_topic };
        if (r.queue.client_capabilities.bulk_message_deletion) return [{ ...base, message_ids: gone }];
        return gone.map((id) => ({ ...base, message_id: id }));
      }
      const received = receivers.get(r.user.id) ?? [];
      const mine = received.length > 0 ? received : formerly.get(r.user.id) ?? [];
      if (mine.length === 0) return [];
      const out: ClientEvent = {
        type: 'update_message',
        user_id: d.user_id,
        edit_timestamp: d.edit_timestamp,
        message_id: d.message_id,
        message_ids: d.message_ids.filter((id) => mine.includes(id)),
        flags: flagsOf({
          userId: r.user.id,
          senderId: 0,
          messageId: d.message_id,
          readThrough: readThrough.get(r.user.id) ?? 0,
          bits: bitsOf.get(r.user.id) ?? 0,
          received: received.includes(d.message_id),
          streamWildcard: current?.stream_wildcard ?? false,
        }),
        rendering_only: false,
      };
      if (d.stream_id !== null) {
        out.stream_id = d.stream_id;
        out.stream_name = stream?.name ?? '';
      }
      if (d.content !== null) {
        Object.assign(out, {
          orig_content: d.prev_content,
          orig_rendered_content: d.prev_rendered_content,
          prev_rendered_content_version: 1,
          content: r.queue.apply_markdown ? d.rendered_content : d.content,
          rendered_content: d.rendered_content,
          is_me_message: d.is_me_message,
        });
      }
      if (d.new_topic !== null || d.new_stream_id !== null) {
        out.propagate_mode = d.propagate_mode;
        out.orig_subject = d.orig_topic;
        if (d.new_topic !== null) {
          out.subject = d.new_topic;
          out.topic_links = renderTopicLinks(d.new_topic, linkifiers);
        }
        if (d.new_stream_id !== null) out.new_stream_id = d.new_stream_id;
      }
      return [out];
    },
  };
});

registerTranslator('MessagesDeleted', async (event, db): Promise<PreparedEvent | null> => {
  const d = event.data as DataOf<'MessagesDeleted'>;
  const receivers = await receiversByMessage(db, d.stream_id, d.dm_user_ids, d.message_ids);
  // As the real server's do_delete_messages: those who may read the messages now (a DM's
  // participants; for a channel, as for a reaction) and the one deleting, each told of all of them.
  const actorId = event.metadata.actor_id;
  const audience = d.stream_id === null
    ? new Set([...d.dm_user_ids, ...(actorId === null ? [] : [actorId])])
    : await channelActionAudience(db, d.stream_id, [...receivers.keys()], actorId);
  const ids = [...d.message_ids].sort((a, b) => a - b);
  return {
    audience,
    forUser: (r) => {
      const base: Record<string, unknown> = { type: 'delete_message', message_type: d.message_type };
      if (d.stream_id !== null) Object.assign(base, { stream_id: d.stream_id, topic: d.topic });
      if (r.queue.client_capabilities.bulk_message_deletion) return [{ ...base, type: 'delete_message', message_ids: ids }];
      return ids.map((id) => ({ ...base, type: 'delete_message', message_id: id }));
    },
  };
});

/**
 * Who hears of an action on a channel message (a reaction), as the real server chooses: its readers now. Where
 * history is protected, those who received it and are still subscribed; in another private channel, its
 * subscribers; in a public one, its subscribers and every member (not guest) who received it. The one acting too.
 */
async function channelActionAudience(db: Db, streamId: number, receiverIds: number[], actorId: number | null): Promise<Set<number>> {
  const actor = actorId === null ? [] : [actorId];
  const stream = await db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst();
  if (!stream) return new Set([...receiverIds, ...actor]);
  const subscribers = await db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', streamId).where('active', '=', true).execute();
  const subscribed = new Set(subscribers.map((r) => r.user_id));
  if (streamHistoryIsProtected(stream)) return new Set([...receiverIds.filter((id) => subscribed.has(id)), ...actor]);
  if (stream.invite_only || receiverIds.length === 0) return new Set([...subscribed, ...actor]);
  const members = await db.selectFrom('users').select('id').where('id', 'in', receiverIds).where('role', '!=', Role.GUEST).execute();
  return new Set([...subscribed, ...members.map((r) => r.id), ...actor]);
}

async function reactionEvent(op: 'add' | 'remove', d: DataOf<'ReactionAdded'>, db: Db): Promise<PreparedEvent | null> {
  const message = await db.selectFrom('messages').select(['stream_id', 'dm_key']).where('id', '=', d.message_id).executeTakeFirst();
  if (!message) return null;
  const receivers = await receiversByMessage(db, message.stream_id, message.dm_key ? message.dm_key.split(',').map(Number) : [], [d.message_id]);
  const audience = message.stream_id === null
    ? new Set([...receivers.keys(), d.user_id])
    : await channelActionAudience(db, message.stream_id, [...receivers.keys()], d.user_id);
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  return {
    audience,
    forUser: (r) => [{
      type: 'reaction',
      op,
      message_id: d.message_id,
      emoji_name: d.emoji_name,
      emoji_code: d.emoji_code,
      reaction_type: d.reaction_type,
      user_id: d.user_id,
      user: { user_id: d.user_id, email: user ? apiEmail(user, realmHost(r.realm)) : '', full_name: user?.full_name ?? '' },
    }],
  };
}
registerTranslator('ReactionAdded', (event, db) => reactionEvent('add', event.data as DataOf<'ReactionAdded'>, db));
registerTranslator('ReactionRemoved', (event, db) => reactionEvent('remove', event.data as DataOf<'ReactionRemoved'>, db));

registerTranslator('MessageFlagsChanged', async (event): Promise<PreparedEvent | null> => {
  const d = event.data as DataOf<'MessageFlagsChanged'>;
  return {
    audience: new Set([d.user_id]),
    forUser: () => {
      // Marking everything read lists no messages: clients reload their unread state.
      const out: ClientEvent = { type: 'update_message_flags', op: d.op, operation: d.op, flag: d.flag, messages: d.all ? [] : d.message_ids, all: d.all };
      if (d.op === 'remove' && d.flag === 'read') out.message_details = d.message_details ?? {};
      return [out];
    },
  };
});

// ---- /register sections ----

registerSection('message', async ({ trx, user }) => ({ max_message_id: await maxReceivedMessageId(trx as Db, user) }));

/**
 * unread_msgs as the real server aggregates it: conversations sorted (direct messages by the other
 * user, channels by id then topic, groups by their id list), `count` leaving out muted
 * conversations, `mentions` with every personal mention but wildcard ones only outside muted
 * conversations, and `old_unreads_missing` when the cap cut the list.
 */
registerSection('update_message_flags', async ({ trx, user, wanted }) => {
  if (wanted && !wanted.has('message')) return {};
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id, readThrough: await readThroughOf(trx as Db, user.id) };
  const rows = await unreadMessages(trx as Db, viewer);
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const mentions: number[] = [];
  let count = 0;
  for (const r of rows) {
    const muted = r.stream_id !== null && r.muted;
    if (r.stream_id === null) {
      const ids = (r.dm_key ?? '').split(',').map(Number);
      const others = ids.filter((id) => id !== user.id);
      if (others.length <= 1) {
        const other = others[0] ?? user.id;
        pms.set(other, [...(pms.get(other) ?? []), r.id]);
      } else huddles.set(r.dm_key!, [...(huddles.get(r.dm_key!) ?? []), r.id]);
    } else {
      const key = `${r.stream_id}\u0000${r.topic}`;
      const entry = streams.get(key) ?? { stream_id: r.stream_id, topic: r.topic, unread_message_ids: [] };
      entry.unread_message_ids.push(r.id);
      streams.set(key, entry);
    }
    if (!muted) count += 1;
    if (r.mentioned || (r.wildcard_mentioned && !muted)) mentions.push(r.id);
  }
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    unread_msgs: {
      pms: [...pms].sort(([a], [b]) => a - b).map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
      streams: [...streams.values()].sort((a, b) => a.stream_id - b.stream_id || byText(a.topic, b.topic)),
      huddles: [...huddles].sort(([a], [b]) => byText(a, b)).map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
      mentions,
      count,
      old_unreads_missing: rows.length === MAX_UNREAD_MESSAGES,
    },
  };
});

registerSection('recent_private_conversations', async ({ trx, user }) => {
  const rows = await trx
    .selectFrom('message_dm_recipients as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .select(['m.dm_key', (eb) => eb.fn.max('m.id').as('max_id')])
    .where('d.user_id', '=', user.id)
    .groupBy('m.dm_key')
    .orderBy('max_id', 'desc')
    .limit(1000)
    .execute();
  return {
    recent_private_conversations: rows.map((r) => ({
      max_message_id: Number(r.max_id),
      user_ids: (r.dm_key ?? '').split(',').map(Number).filter((id) => id !== user.id),
    })),
  };
});

registerSection('starred_messages', async ({ trx, user }) => {
  const rows = await trx
    .selectFrom('message_flags')
    .select('message_id')
    .where('user_id', '=', user.id)
    .where(sql<boolean>`flags & ${FlagBit.STARRED} <> 0`)
    .orderBy('message_id')
    .execute();
  return { starred_messages: rows.map((r) => r.message_id) };
});
