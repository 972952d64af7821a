import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import {
  checkCanPost,
  decideDeleteMessage,
  decideEditMessage,
  decideFlags,
  decideReaction,
  deletion,
  normalizeContent,
  normalizeTopic,
  type MessageState,
  type Sender,
} from '../domain/messages/decider.js';
import type { MessageFlagsChanged, MessagesDeleted, MovedReceptions } from '../domain/messages/events.js';
import { EDITABLE_FLAGS, FlagBit, NON_EDITABLE_FLAGS, isRead } from '../domain/messages/flags.js';
import type { StreamPropertyChanged } from '../domain/channels/events.js';
import { canonicalStreamName } from '../domain/channels/decider.js';
import { renderMarkdownAsync, type RenderResult } from '../markdown/index.js';
import { resolveReaction, type ReactionParams } from './reaction-emoji.js';
import { buildNarrow, messageModifiableBy, messageVisibleTo, mutedSql, parseNarrow, receivedSql, unreadSql, type NarrowViewer } from '../read/narrow.js';
import { getMessageRow, getMessageRows, narrowViewer, readThroughOf, userMessageState, fetchMessages, type FetchParams, type MessageRow } from '../read/messages.js';
import type { UserRow } from '../read/users.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { canReadStreamContent, isSubscribed, streamHistoryIsProtected, subscriberIds, type StreamRow } from '../visibility.js';
import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import { realmRenderData, senderRenderContext } from './render-context.js';
import { withTopicLinkTargets } from './topic-link-targets.js';
import { claimableUploadPaths } from './attachments.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { isAdminRole } from '../domain/roles.js';
import { deletedMessageGraceDays, shredMessages } from './forgetting.js';
import { isDbInt } from '../domain/ids.js';

import { messageStream } from './message-send.js';

export { messageStream, sendMessage, prepareMessage, type PreparedMessage, type SendParams, type SendResult } from './message-send.js';
export const flagsStream = (userId: number) => `message-flags-${userId}`;
const channelStream = (streamId: number) => `channel-${streamId}`;

export const invalidMessage = () => errors.badRequest('Invalid message(s)');

const senderOf = (user: UserRow): Sender => ({ user_id: user.id, role: user.role, is_bot: user.is_bot, is_system_bot: user.is_system_bot });
const nowSeconds = (meta: RequestMeta) => Math.floor(meta.now.getTime() / 1000);

async function findStream(db: Db, realmId: number, target: string | number): Promise<StreamRow | undefined> {
  if (typeof target === 'number' && !isDbInt(target)) return undefined;
  const q = db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).where('deactivated', '=', false);
  return typeof target === 'number'
    ? q.where('id', '=', target).executeTakeFirst()
    : q.where(sql`lower(name)`, '=', canonicalStreamName(target).toLowerCase()).executeTakeFirst();
}

/** A message the user may see, or `Invalid message(s)`. */
export async function requireVisibleMessage(db: Db, user: UserRow, id: number): Promise<MessageRow> {
  const row = await getMessageRow(db, id);
  if (!row || !(await messageVisibleTo(db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, row))) throw invalidMessage();
  return row;
}

function stateOf(row: MessageRow): MessageState {
  return {
    message_id: row.id,
    realm_id: row.realm_id,
    sender_id: row.sender_id,
    stream_id: row.stream_id,
    topic: row.topic,
    content: row.content,
    rendered_content: row.rendered_content,
    date_sent: Number(row.date_sent),
    dm_user_ids: row.dm_key ? row.dm_key.split(',').map(Number) : [],
  };
}

/** A realm time limit in seconds; null (or absent) means no limit. */
function limitOf(props: Record<string, unknown>, key: string): number | null {
  const v = props[key] === undefined ? DEFAULT_REALM_PROPERTIES[key as keyof typeof DEFAULT_REALM_PROPERTIES] : props[key];
  return typeof v === 'number' ? v : null;
}

/**
 * Users who take part in a topic (sent a message to it or reacted to one), among `among`: the
 * only receivers a topic wildcard mention (@**topic**) flags, as on the real server.
 */
async function topicParticipants(db: Db, streamId: number, topic: string, senderId: number, among: Set<number>): Promise<number[]> {
  const rows = (await sql<{ user_id: number }>`
    SELECT m.sender_id AS user_id FROM messages m WHERE m.stream_id = ${streamId} AND lower(m.topic) = ${topic.toLowerCase()}
    UNION
    SELECT r.user_id FROM reactions r JOIN messages m ON m.id = r.message_id
    WHERE m.stream_id = ${streamId} AND lower(m.topic) = ${topic.toLowerCase()}`.execute(db)).rows;
  const ids = new Set([senderId, ...rows.map((r) => Number(r.user_id))]);
  return [...ids].filter((id) => among.has(id)).sort((a, b) => a - b);
}

/** The message_moved_receptions rows of `ids`, grouped by user and answer, in a stable order. */
async function movedReceptionsOf(db: Db, ids: number[]): Promise<MovedReceptions> {
  const rows = await db
    .selectFrom('message_moved_receptions')
    .select(['user_id', 'received', 'message_id'])
    .where('message_id', 'in', ids)
    .orderBy('user_id')
    .orderBy('received')
    .orderBy('message_id')
    .execute();
  const out: MovedReceptions = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last.user_id === r.user_id && last.received === r.received) last.message_ids.push(r.message_id);
    else out.push({ user_id: r.user_id, received: r.received, message_ids: [r.message_id] });
  }
  return out;
}

export interface EditParams {
  content?: string;
  topic?: string;
  stream_id?: number;
  propagate_mode?: 'change_one' | 'change_later' | 'change_all';
}

/** PATCH /messages/{message_id}. */
export async function editMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, messageId: number, params: EditParams): Promise<void> {
  const props = realm.properties as Record<string, unknown>;
  if (params.content === undefined && params.topic === undefined && params.stream_id === undefined) throw errors.badRequest('Nothing to change');
  // Rendered once, even when a version conflict runs the decision again (a large render may take a while).
  let rendering: Promise<RenderResult> | undefined;
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireVisibleMessage(ctx.db, user, messageId);
    const state = stateOf(row);
    let content = null;
    if (params.content !== undefined) {
      const text = normalizeContent(params.content);
      const data = await realmRenderData(ctx, realm.id);
      rendering ??= withTopicLinkTargets(ctx.db, senderRenderContext(data.context, user), user, text).then((context) => renderMarkdownAsync(text, context));
      const rendered = await rendering;
      const receivers = new Set(row.stream_id !== null ? [...(await subscriberIds(ctx.db, row.stream_id)), row.sender_id] : state.dm_user_ids);
      const mentioned = new Set(rendered.mentionedUserIds.filter((id) => receivers.has(id)));
      for (const g of rendered.mentionedGroupIds) for (const id of data.groupMembers.get(g) ?? []) if (receivers.has(id)) mentioned.add(id);
      const prev = await ctx.db
        .selectFrom('message_flags')
        .select('user_id')
        .where('message_id', '=', messageId)
        .where(sql<boolean>`flags & ${FlagBit.MENTIONED} <> 0`)
        .execute();
      content = {
        content: text,
        rendered_content: rendered.html,
        is_me_message: rendered.isMeMessage,
        has_link: rendered.hasLink,
        has_image: rendered.hasImage,
        has_attachment: rendered.hasAttachment,
        mentioned_user_ids: [...mentioned].sort((a, b) => a - b),
        prev_mentioned_user_ids: prev.map((p) => p.user_id).sort((a, b) => a - b),
        stream_wildcard: rendered.streamWildcard,
        topic_wildcard: rendered.topicWildcard,
        topic_wildcard_user_ids: rendered.topicWildcard && row.stream_id !== null
          ? await topicParticipants(ctx.db, row.stream_id, row.topic, row.sender_id, receivers)
          : [],
        attachment_paths: await claimableUploadPaths(ctx.db, user, rendered.linkedUploadPaths),
      };
    }
    const newTopic = params.topic !== undefined ? normalizeTopic(params.topic, props.mandatory_topics === true) : null;
    let newStreamId: number | null = null;
    if (params.stream_id !== undefined && params.stream_id !== row.stream_id) {
      const target = await findStream(ctx.db, realm.id, params.stream_id);
      if (!target) throw errors.badRequest('Invalid channel ID');
      const subscribed = await isSubscribed(ctx.db, user.id, target.id);
      if (target.invite_only && !subscribed && !isAdminRole(user.role)) throw errors.badRequest('Invalid channel ID');
      checkCanPost(senderOf(user), { ...target, stream_id: target.id }, subscribed || (!target.invite_only && isAdminRole(user.role)));
      newStreamId = target.id;
    }
    const mode = params.propagate_mode ?? 'change_one';
    let movedIds = [messageId];
    let movedDates = [Number(row.date_sent)];
    if ((newTopic !== null || newStreamId !== null) && row.stream_id !== null && mode !== 'change_one') {
      // In a channel with protected history, only what the actor received moves (as on the real server).
      const from = await ctx.db.selectFrom('streams').selectAll().where('id', '=', row.stream_id).executeTakeFirst();
      const rows = (await sql<{ id: number; date_sent: number }>`
        SELECT m.id, m.date_sent FROM messages m
        WHERE m.stream_id = ${row.stream_id} AND lower(m.topic) = ${row.topic.toLowerCase()}
          ${mode === 'change_later' ? sql`AND m.id >= ${messageId}` : sql``}
          ${from && streamHistoryIsProtected(from) ? sql`AND ${receivedSql(user.id)}` : sql``}
        ORDER BY m.id`.execute(ctx.db)).rows;
      const others = rows.filter((r) => r.id !== messageId);
      movedIds = [messageId, ...others.map((r) => r.id)];
      movedDates = [Number(row.date_sent), ...others.map((r) => Number(r.date_sent))];
    }
    // The audience of a second move's events includes what an earlier move wrote for these
    // messages, which the fold of this one replaces: carried in the event (see MessageEdited).
    const priorMovedReceptions = newStreamId !== null && row.stream_id !== null ? await movedReceptionsOf(ctx.db, movedIds) : undefined;
    const events = decideEditMessage({
      actor: senderOf(user),
      now: nowSeconds(meta),
      content,
      new_topic: newTopic,
      new_stream_id: newStreamId,
      propagate_mode: mode,
      moved_ids: movedIds,
      moved_dates: movedDates,
      prior_moved_receptions: priorMovedReceptions,
      policy: {
        allow_message_editing: props.allow_message_editing !== false,
        message_content_edit_limit_seconds: (props.message_content_edit_limit_seconds as number | null | undefined) ?? null,
        edit_topic_policy: Number(props.edit_topic_policy ?? 5),
        move_messages_between_streams_policy: Number(props.move_messages_between_streams_policy ?? 1),
        move_messages_within_stream_limit_seconds: limitOf(props, 'move_messages_within_stream_limit_seconds'),
        move_messages_between_streams_limit_seconds: limitOf(props, 'move_messages_between_streams_limit_seconds'),
      },
    }, state);
    return { appends: [{ streamId: messageStream(messageId), expectedVersion: row.version, events }], result: undefined };
  });
}

/** GET /messages/{message_id}/history: the versions of a message, oldest first. */
export async function messageHistory(db: Db, user: UserRow, realm: RealmRow, messageId: number): Promise<Array<Record<string, unknown>>> {
  const row = await requireVisibleMessage(db, user, messageId);
  if ((realm.properties as Record<string, unknown>).allow_edit_history === false) throw errors.badRequest('Message edit history is disabled in this organization');
  // Walk back from the current version: each entry records what it replaced.
  const cur = { content: row.content, rendered: row.rendered_content, topic: row.topic };
  const versions: Array<Record<string, unknown>> = [];
  for (const entry of (row.edit_history as Array<Record<string, any>> | null) ?? []) {
    const v: Record<string, unknown> = { topic: cur.topic, content: cur.content, rendered_content: cur.rendered, timestamp: entry.timestamp, user_id: entry.user_id };
    if (entry.prev_content !== undefined) {
      v.prev_content = entry.prev_content;
      v.prev_rendered_content = entry.prev_rendered_content;
      cur.content = entry.prev_content;
      cur.rendered = entry.prev_rendered_content;
    }
    if (entry.prev_topic !== undefined) {
      v.prev_topic = entry.prev_topic;
      cur.topic = entry.prev_topic;
    }
    if (entry.prev_stream !== undefined) {
      v.prev_stream = entry.prev_stream;
      v.stream = entry.stream;
    }
    versions.unshift(v);
  }
  return [{ topic: cur.topic, content: cur.content, rendered_content: cur.rendered, timestamp: Number(row.date_sent), user_id: row.sender_id }, ...versions];
}

/**
 * DELETE /messages/{message_id}. The content stays readable in the log for the organization's
 * grace period, then is shredded (src/services/forgetting.ts); `purge` (administrators) shreds now.
 */
export async function deleteMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, messageId: number, options: { purge?: boolean } = {}): Promise<void> {
  const props = realm.properties as Record<string, unknown>;
  if (options.purge && !isAdminRole(user.role)) throw errors.mustBeAdmin();
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireVisibleMessage(ctx.db, user, messageId);
    const events = decideDeleteMessage(senderOf(user), nowSeconds(meta), stateOf(row), {
      delete_own_message_policy: Number(props.delete_own_message_policy ?? 5),
      message_content_delete_limit_seconds: (props.message_content_delete_limit_seconds as number | null | undefined) ?? null,
    });
    return { appends: [{ streamId: messageStream(messageId), expectedVersion: row.version, events }], result: undefined };
  });
  if (options.purge || deletedMessageGraceDays(realm, ctx.config.deletedMessageShredDays) === 0) {
    await shredMessages(ctx, meta, realm.id, [messageId], options.purge ? 'purge' : 'deleted');
  }
}

/** POST and DELETE /messages/{message_id}/reactions. */
export async function react(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, messageId: number, op: 'add' | 'remove', params: ReactionParams): Promise<void> {
  if ((realm.properties as Record<string, unknown>).emoji_reactions_enabled === false) throw errors.badRequest('Emoji reactions are disabled.');
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await getMessageRow(ctx.db, messageId);
    // Reacting needs reading rights now (the real server's check for changing a message), not once.
    if (!row || !(await messageModifiableBy(ctx.db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, row))) throw invalidMessage();
    const { emoji, existing } = await resolveReaction(ctx.db, realm.id, messageId, user.id, params, op);
    const events = decideReaction({ op, message_id: messageId, user_id: user.id, ...emoji }, existing);
    return { appends: [{ streamId: messageStream(messageId), expectedVersion: row.version, events }], result: undefined };
  });
}

/** What clients need to count a message as unread again (update_message_flags remove read). */
async function messageDetails(db: Db, viewer: NarrowViewer, rows: MessageRow[]): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  const state = await userMessageState(db, viewer.user_id, rows);
  const muted = rows.length === 0 ? new Set<number>() : new Set((await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE m.id IN (${sql.join(rows.map((r) => r.id))}) AND ${mutedSql(viewer.user_id)}`.execute(db)).rows.map((r) => r.id));
  for (const r of rows) {
    const bits = state.bits.get(r.id) ?? 0;
    const mentioned = (bits & (FlagBit.MENTIONED | FlagBit.TOPIC_WILDCARD)) !== 0 || r.stream_wildcard;
    const d: Record<string, unknown> = r.stream_id === null
      ? { type: 'private', user_ids: (r.dm_key ?? '').split(',').map(Number).filter((id) => id !== viewer.user_id) }
      : { type: 'stream', stream_id: r.stream_id, topic: r.topic, unmuted_stream_msg: !muted.has(r.id) };
    if (mentioned) d.mentioned = true;
    out[String(r.id)] = d;
  }
  return out;
}

/** Applies a flag change to the messages among `ids` the user may see; returns the ids that changed. */
export async function changeFlags(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  op: string,
  flag: string,
  ids: number[],
  options: { readThrough?: number } = {},
): Promise<number[]> {
  if (op !== 'add' && op !== 'remove') throw errors.badRequest(`Invalid message flag operation: '${op}'`);
  if (NON_EDITABLE_FLAGS.includes(flag)) throw errors.badRequest(`Flag not editable: '${flag}'`);
  if (!(EDITABLE_FLAGS as readonly string[]).includes(flag)) throw errors.badRequest(`Invalid flag: '${flag}'`);
  const viewer = await narrowViewer(ctx.db, user);
  const rows = await getMessageRows(ctx.db, [...new Set(ids)]);
  const state = await userMessageState(ctx.db, user.id, rows);
  const visible: MessageRow[] = [];
  for (const r of rows) {
    if (state.received.has(r.id) || (await messageVisibleTo(ctx.db, viewer, r))) visible.push(r);
  }
  if (rows.length < new Set(ids).size || visible.length < rows.length) {
    if (flag !== 'read' || op !== 'add' || options.readThrough === undefined) throw invalidMessage();
  }
  const changed = visible.filter((r) => {
    const bits = state.bits.get(r.id) ?? 0;
    if (flag === 'read') {
      const read = isRead({ bits, received: state.received.has(r.id), messageId: r.id, readThrough: viewer.readThrough, userId: user.id, senderId: r.sender_id });
      return op === 'add' ? !read : read;
    }
    const bit = flag === 'starred' ? FlagBit.STARRED : FlagBit.COLLAPSED;
    return op === 'add' ? (bits & bit) === 0 : (bits & bit) !== 0;
  });
  const ids2 = changed.map((r) => r.id).sort((a, b) => a - b);
  const details = flag === 'read' && op === 'remove' ? await messageDetails(ctx.db, viewer, changed) : null;
  const events: MessageFlagsChanged[] = decideFlags({
    user_id: user.id,
    op,
    flag,
    message_ids: ids2,
    all: false,
    read_through: options.readThrough ?? null,
    message_details: details,
  });
  if (events.length > 0 && ids2.length === 0 && options.readThrough !== undefined && options.readThrough <= viewer.readThrough) return [];
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: flagsStream(user.id), expectedVersion: undefined, events }],
    result: undefined,
  }));
  return ids2;
}

/** Unread message ids of the user within extra SQL conditions (a channel, a topic). */
async function unreadIds(db: Db, viewer: NarrowViewer, realm: RealmRow, narrow: unknown[]): Promise<number[]> {
  const built = await buildNarrow(db, viewer, realmHost(realm), parseNarrow(narrow));
  const rows = await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE ${sql.join(built.conditions, sql` AND `)} AND ${unreadSql(viewer)} ORDER BY m.id`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** POST /mark_all_as_read: moves the read watermark to the newest message. */
export async function markAllAsRead(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow): Promise<void> {
  const viewer = await narrowViewer(ctx.db, user);
  const ids = await unreadIds(ctx.db, viewer, realm, []);
  const max = await ctx.db.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
  const readThrough = Math.max(Number(max?.m ?? 0), viewer.readThrough);
  if (ids.length === 0 && readThrough === viewer.readThrough) return;
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{
      streamId: flagsStream(user.id),
      expectedVersion: undefined,
      events: [{ type: 'MessageFlagsChanged', data: { user_id: user.id, op: 'add', flag: 'read', message_ids: ids, all: false, read_through: readThrough, message_details: null } }],
    }],
    result: undefined,
  }));
}

export async function requireStreamForUser(db: Db, user: UserRow, streamId: number): Promise<StreamRow> {
  if (!isDbInt(streamId)) throw errors.badRequest('Invalid channel ID');
  const stream = await db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst();
  if (!stream || stream.realm_id !== user.realm_id) throw errors.badRequest('Invalid channel ID');
  // As the real server's access_stream_by_id: an administrator not subscribed to a private channel has no access.
  if (!canReadStreamContent({ user_id: user.id, role: user.role, realm_id: user.realm_id }, stream, await isSubscribed(db, user.id, streamId))) {
    throw errors.badRequest('Invalid channel ID');
  }
  return stream;
}

/** POST /mark_stream_as_read and /mark_topic_as_read. */
export async function markConversationAsRead(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, streamId: number, topic?: string): Promise<void> {
  await requireStreamForUser(ctx.db, user, streamId);
  const viewer = await narrowViewer(ctx.db, user);
  const narrow: unknown[] = [{ operator: 'channel', operand: streamId }];
  if (topic !== undefined) narrow.push({ operator: 'topic', operand: topic });
  const ids = await unreadIds(ctx.db, viewer, realm, narrow);
  if (ids.length === 0) return;
  await changeFlags(ctx, meta, user, 'add', 'read', ids);
}

/** POST /messages/flags/narrow. */
export async function changeFlagsForNarrow(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  op: string,
  flag: string,
  window: FetchParams,
): Promise<Record<string, unknown>> {
  const capped = { ...window, numBefore: Math.min(window.numBefore, 5000), numAfter: Math.min(window.numAfter, 5000) };
  const viewer = await narrowViewer(ctx.db, user);
  const found = await fetchMessages(ctx.db, viewer, realm, capped);
  const ids = found.rows.map((r) => r.id);
  const changed = ids.length === 0 ? [] : await changeFlags(ctx, meta, user, op, flag, ids);
  return {
    processed_count: ids.length,
    updated_count: changed.length,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids[ids.length - 1] ?? null,
    found_oldest: found.foundOldest,
    found_newest: found.foundNewest,
  };
}

/** Tunables of topic deletion (tests shorten the budget). */
export const deleteTopicLimits = { budgetMs: 10_000, batchSize: 100 };

/**
 * POST /streams/{stream_id}/delete_topic: deletes newest first in batches, each batch its own
 * command, until the topic is empty or the time budget is spent (then complete: false).
 */
export async function deleteTopic(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, streamId: number, topic: string): Promise<{ complete: boolean }> {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
  const stream = await requireStreamForUser(ctx.db, user, streamId);
  const viewer = await narrowViewer(ctx.db, user);
  const started = Date.now();
  const narrow = [{ operator: 'channel', operand: streamId }, { operator: 'topic', operand: topic }];
  const built = await buildNarrow(ctx.db, viewer, realmHost(realm), parseNarrow(narrow));
  const where = sql.join(built.conditions, sql` AND `);
  for (let batches = 0; ; batches++) {
    const batch = (await sql<{ id: number; topic: string }>`
      SELECT m.id, m.topic FROM messages m WHERE ${where} ORDER BY m.id DESC LIMIT ${deleteTopicLimits.batchSize}`.execute(ctx.db)).rows;
    if (batch.length === 0) return { complete: true };
    // At least one batch per request, so a repeated request always makes progress.
    if (batches > 0 && Date.now() - started > deleteTopicLimits.budgetMs) return { complete: false };
    await ctx.commands.run(metadataOf(meta), async () => {
      const first = await ctx.db.selectFrom('messages').select((eb) => eb.fn.min('id').as('m')).where('stream_id', '=', streamId).executeTakeFirst();
      const ids = batch.map((r) => r.id);
      const event: MessagesDeleted = deletion(ids, { realm_id: realm.id, stream_id: streamId, topic: batch[0]!.topic, dm_user_ids: [] });
      const appends = [{ streamId: messageStream(ids[0]!), expectedVersion: undefined, events: [event] as Array<MessagesDeleted | StreamPropertyChanged> }];
      const oldFirst = first?.m === null || first?.m === undefined ? null : Number(first.m);
      if (oldFirst !== null && ids.includes(oldFirst)) {
        const next = await ctx.db
          .selectFrom('messages')
          .select((eb) => eb.fn.min('id').as('m'))
          .where('stream_id', '=', streamId)
          .where('id', 'not in', ids)
          .executeTakeFirst();
        const value = next?.m === null || next?.m === undefined ? null : Number(next.m);
        appends.push({
          streamId: channelStream(stream.id),
          expectedVersion: undefined,
          events: [{ type: 'StreamPropertyChanged', data: { stream_id: stream.id, property: 'first_message_id', value } }],
        });
      }
      return { appends, result: undefined };
    });
  }
}

export { readThroughOf };
