import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { ApiError, errors } from '../domain/errors.js';
import {
  checkCanPost,
  decideDeleteMessage,
  decideEditMessage,
  decideReaction,
  deletion,
  normalizeContent,
  normalizeEditedContent,
  requestedTopic,
  normalizeTopic,
  type MessageState,
  type Sender,
} from '../domain/messages/decider.js';
import type { MessageSent, MessagesDeleted, MovedReceptions } from '../domain/messages/events.js';
import { FlagBit } from '../domain/messages/flags.js';
import type { StreamPropertyChanged } from '../domain/channels/events.js';
import type { StreamAppend } from '../eventstore/types.js';
import { canonicalStreamName } from '../domain/channels/decider.js';
import { renderMarkdownAsync, type RenderResult } from '../markdown/index.js';
import { resolveReaction, type ReactionParams } from './reaction-emoji.js';
import { buildNarrow, messageModifiableBy, messageAccessibleTo, mutedSql, parseNarrow, receivedSql, unreadSql, type NarrowViewer } from '../read/narrow.js';
import { getMessageRow, getMessageRows, narrowViewer, readThroughOf, userMessageState, fetchMessages, type FetchParams, type MessageRow } from '../read/messages.js';
import type { UserRow } from '../read/users.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { canReadStreamContent, isSubscribed, messageReceiverIds, streamHistoryIsProtected, subscriberIds, type StreamRow } from '../visibility.js';
import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import { alertedUsers, checkGroupMentionsAllowed, realmRenderData, senderRenderContext } from './render-context.js';
import { withTopicLinkTargets } from './topic-link-targets.js';
import { claimableUploadPaths } from './attachments.js';
import { linkedAttachmentPathIds } from '../read/attachments.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { isAdminRole } from '../domain/roles.js';
import { waitingPeriodDays, withinWaitingPeriod } from '../domain/user-groups/full-members.js';
import { deletedMessageGraceDays, shredMessages } from './forgetting.js';
import { isDbInt } from '../domain/ids.js';
import { highlightHtmlDifferences } from '../domain/messages/html-diff.js';
import { SHREDDED } from '../eventstore/crypto/envelope.js';
import { sendMoveNotices, type MoveOutcome } from './move-notifications.js';
import { movedWholeTopic, moveTopicPolicies } from './move-topic-policies.js';
import { topicPolicyHandovers } from './topic-policy-handover.js';

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
  if (!row || !(await messageAccessibleTo(db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, row))) throw invalidMessage();
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
  /** Notification Bot's breadcrumb in the old topic (default false) and the new one (default true) */
  send_notification_to_old_thread?: boolean;
  send_notification_to_new_thread?: boolean;
}

/** PATCH /messages/{message_id}. */
export async function editMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, messageId: number, params: EditParams): Promise<void> {
  const props = realm.properties as Record<string, unknown>;
  // Rendered once, even when a version conflict runs the decision again (a large render may take a while).
  let rendering: Promise<RenderResult> | undefined;
  const { result: move } = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await getMessageRow(ctx.db, messageId);
    // Changing a message needs access now (a former subscriber keeps reading what they received, not editing it).
    if (!row || !(await messageModifiableBy(ctx.db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, row))) throw invalidMessage();
    const state = stateOf(row);
    let content = null;
    if (params.content !== undefined) {
      const text = normalizeEditedContent(params.content);
      const data = await realmRenderData(ctx, realm.id);
      rendering ??= withTopicLinkTargets(ctx.db, senderRenderContext(data.context, user), user, text).then((context) => renderMarkdownAsync(text, context));
      const rendered = await rendering;
      checkGroupMentionsAllowed(data, user.id, rendered.mentionedGroupIds);
      const receivers = new Set(row.stream_id !== null ? [...(await subscriberIds(ctx.db, row.stream_id)), row.sender_id] : state.dm_user_ids);
      const mentioned = new Set(rendered.mentionedUserIds.filter((id) => receivers.has(id)));
      for (const g of rendered.mentionedGroupIds) for (const id of data.groupMembers.get(g) ?? []) if (receivers.has(id)) mentioned.add(id);
      const flagged = await ctx.db
        .selectFrom('message_flags')
        .select(['user_id', 'flags'])
        .where('message_id', '=', messageId)
        .where(sql<boolean>`flags & ${FlagBit.MENTIONED | FlagBit.HAS_ALERT_WORD} <> 0`)
        .execute();
      const withBit = (bit: number) => flagged.filter((f) => (f.flags & bit) !== 0).map((f) => f.user_id).sort((a, b) => a - b);
      // Alert words: everyone who has the message (those who received it, and the channel's subscribers now).
      const holders = row.stream_id !== null ? new Set([...receivers, ...(await messageReceiverIds(ctx.db, row.stream_id, messageId))]) : receivers;
      content = {
        content: text,
        rendered_content: rendered.html,
        is_me_message: rendered.isMeMessage,
        has_link: rendered.hasLink,
        has_image: rendered.hasImage,
        has_attachment: rendered.hasAttachment,
        mentioned_user_ids: [...mentioned].sort((a, b) => a - b),
        prev_mentioned_user_ids: withBit(FlagBit.MENTIONED),
        stream_wildcard: rendered.streamWildcard,
        topic_wildcard: rendered.topicWildcard,
        topic_wildcard_user_ids: rendered.topicWildcard && row.stream_id !== null
          ? await topicParticipants(ctx.db, row.stream_id, row.topic, row.sender_id, receivers)
          : [],
        alerted_user_ids: alertedUsers(data.alertWords, holders, text).sort((a, b) => a - b),
        prev_alerted_user_ids: withBit(FlagBit.HAS_ALERT_WORD),
        attachment_paths: await claimableUploadPaths(ctx.db, user, rendered.linkedUploadPaths),
        prev_attachment_path_ids: await linkedAttachmentPathIds(ctx.db, messageId),
      };
    }
    const moving = requestedTopic(params.topic ?? null, row.topic) !== null;
    let newStreamId: number | null = null;
    let targetRefusal: ApiError | null = null;
    if (params.stream_id !== undefined && row.stream_id !== null && params.stream_id !== row.stream_id) {
      newStreamId = params.stream_id;
      const target = await findStream(ctx.db, realm.id, params.stream_id);
      const subscribed = target ? await isSubscribed(ctx.db, user.id, target.id) : false;
      // Access as to read the target (an administrator too needs a subscription to a private
      // one), then its posting policy; a subscription is not needed to move into a public one.
      if (!target || !canReadStreamContent({ user_id: user.id, role: user.role, realm_id: user.realm_id }, target, subscribed)) {
        targetRefusal = errors.badRequest('Invalid channel ID');
      } else {
        try {
          checkCanPost({ ...senderOf(user), is_full_member: isFullMember(user, realm, meta.now) }, { ...target, stream_id: target.id }, true);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          targetRefusal = error;
        }
      }
    } else if (params.stream_id !== undefined && row.stream_id === null) {
      newStreamId = params.stream_id;
    }
    const mode = params.propagate_mode ?? 'change_one';
    let movedIds = [messageId];
    let movedDates = [Number(row.date_sent)];
    if ((moving || newStreamId !== null) && row.stream_id !== null && mode !== 'change_one') {
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
    const priorMovedReceptions = newStreamId !== null && targetRefusal === null && row.stream_id !== null ? await movedReceptionsOf(ctx.db, movedIds) : undefined;
    const events = decideEditMessage({
      actor: { ...senderOf(user), is_full_member: isFullMember(user, realm, meta.now) },
      now: nowSeconds(meta),
      content,
      new_topic: params.topic ?? null,
      new_stream_id: newStreamId,
      target_refusal: targetRefusal,
      propagate_mode: mode,
      is_widget: params.content !== undefined && (await hasSubmessages(ctx.db, messageId)),
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
    const edited = events[0]!.data;
    const outcome: MoveOutcome | null = edited.stream_id !== null && (edited.new_topic !== null || edited.new_stream_id !== null) ? {
      messageId: edited.message_id,
      fromStreamId: edited.stream_id,
      fromTopic: edited.orig_topic,
      toStreamId: edited.new_stream_id ?? edited.stream_id,
      toTopic: edited.new_topic ?? edited.orig_topic,
      requestedTopic: requestedTopic(params.topic ?? null, row.topic),
      movedIds: edited.message_ids,
      propagateMode: edited.propagate_mode,
      contentChanged: edited.content !== null,
    } : null;
    return { appends: [{ streamId: messageStream(messageId), expectedVersion: row.version, events }], result: outcome };
  });
  if (move) {
    // As the real server: topic preferences follow a topic moved whole, then the notices go out.
    const movedAll = await movedWholeTopic(ctx.db, user, move);
    if (movedAll) await moveTopicPolicies(ctx, meta, move);
    await sendMoveNotices(ctx, meta, user, realm, move, {
      oldThread: params.send_notification_to_old_thread ?? false,
      newThread: params.send_notification_to_new_thread ?? true,
    }, movedAll);
  }
}

/** Whether a message carries a widget (the real server: it has submessages). */
async function hasSubmessages(db: Db, messageId: number): Promise<boolean> {
  return (await db.selectFrom('submessages').select('id').where('message_id', '=', messageId).limit(1).executeTakeFirst()) !== undefined;
}

/** A member past the organization's waiting period (waiting_period_threshold days since joining). */
function isFullMember(user: UserRow, realm: RealmRow, now: Date): boolean {
  return !withinWaitingPeriod(user.date_joined, waitingPeriodDays(realm.properties), now);
}

/**
 * GET /messages/{message_id}/history: the versions of a message, oldest first (the real server's
 * fill_edit_history_entries). Each entry holds the topic and content after its edit, what the edit
 * changed, and for a content edit the highlighted differences from the version before.
 */
export async function messageHistory(db: Db, user: UserRow, realm: RealmRow, messageId: number): Promise<Array<Record<string, unknown>>> {
  // The organization's setting is checked before the message is looked up, as on the real server.
  if ((realm.properties as Record<string, unknown>).allow_edit_history === false) throw errors.badRequest('Message edit history is disabled in this organization');
  const row = await requireVisibleMessage(db, user, messageId);
  // Walk back from the current version: each entry records what it replaced.
  const cur = { content: row.content, rendered: row.rendered_content, topic: row.topic };
  const versions: Array<Record<string, unknown>> = [];
  for (const entry of (row.edit_history as Array<Record<string, any>> | null) ?? []) {
    const v: Record<string, unknown> = { content: cur.content, rendered_content: cur.rendered, timestamp: entry.timestamp, topic: cur.topic, user_id: entry.user_id };
    if (entry.prev_topic !== undefined) {
      v.prev_topic = entry.prev_topic;
      cur.topic = entry.prev_topic;
    }
    if (entry.prev_content !== undefined) {
      v.prev_content = entry.prev_content;
      v.prev_rendered_content = entry.prev_rendered_content;
      v.content_html_diff = contentHtmlDiff(entry.prev_rendered_content, cur.rendered);
      cur.content = entry.prev_content;
      cur.rendered = entry.prev_rendered_content;
    }
    if (entry.prev_stream !== undefined) {
      v.prev_stream = entry.prev_stream;
      v.stream = entry.stream;
    }
    versions.unshift(v);
  }
  return [{ content: cur.content, rendered_content: cur.rendered, timestamp: Number(row.date_sent), topic: cur.topic, user_id: row.sender_id }, ...versions];
}

/**
 * A forgotten version reads as the shredded marker, and so does its difference: the diff is made of
 * the two versions' own words, so it never shows one that is shredded (both sides of an edit are
 * sealed under the message's one key, and go together).
 */
function contentHtmlDiff(previous: unknown, current: string): string {
  if (previous === SHREDDED || current === SHREDDED) return `<div>${SHREDDED}</div>`;
  return highlightHtmlDifferences(typeof previous === 'string' ? previous : '', current);
}

/**
 * DELETE /messages/{message_id}. The content stays readable in the log for the organization's
 * grace period, then is shredded (src/services/forgetting.ts); `purge` (administrators) shreds now.
 */
export async function deleteMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, messageId: number, options: { purge?: boolean } = {}): Promise<void> {
  const props = realm.properties as Record<string, unknown>;
  if (options.purge && !isAdminRole(user.role)) throw errors.mustBeAdmin();
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await getMessageRow(ctx.db, messageId);
    // Deleting needs access now, as any change of a message (not in an archived channel, nor a
    // protected one the user has left).
    if (!row || !(await messageModifiableBy(ctx.db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, row))) throw invalidMessage();
    const sender = await ctx.db.selectFrom('users').select('bot_owner_id').where('id', '=', row.sender_id).executeTakeFirst();
    const events = decideDeleteMessage({ ...senderOf(user), is_full_member: isFullMember(user, realm, meta.now) }, nowSeconds(meta), stateOf(row), {
      delete_own_message_policy: Number(props.delete_own_message_policy ?? 5),
      message_content_delete_limit_seconds: (props.message_content_delete_limit_seconds as number | null | undefined) ?? null,
    }, sender?.bot_owner_id ?? null);
    const appends: StreamAppend[] = [{ streamId: messageStream(messageId), expectedVersion: row.version, events }];
    if (row.stream_id !== null) appends.push(...(await channelAppendsOfDeleting(ctx.db, row.stream_id, [messageId])));
    return { appends, result: undefined };
  });
  if (options.purge || deletedMessageGraceDays(realm, ctx.config.deletedMessageShredDays) === 0) {
    await shredMessages(ctx, meta, realm.id, [messageId], options.purge ? 'purge' : 'deleted');
  }
}

/**
 * Deletes a message the server itself takes back (a resolve notice undone within its grace
 * period): no permission check, the same events as DELETE /messages/{id}; the shred follows the
 * organization's grace period as for any deletion.
 */
export async function deleteMessageAsServer(ctx: ServiceContext, meta: RequestMeta, realm: RealmRow, messageId: number): Promise<void> {
  const deleted = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await getMessageRow(ctx.db, messageId);
    if (!row) return { appends: [], result: false };
    const appends: StreamAppend[] = [{ streamId: messageStream(messageId), expectedVersion: row.version, events: [deletion([messageId], stateOf(row))] }];
    if (row.stream_id !== null) appends.push(...(await channelAppendsOfDeleting(ctx.db, row.stream_id, [messageId])));
    return { appends, result: true };
  });
  if (deleted.result && deletedMessageGraceDays(realm, ctx.config.deletedMessageShredDays) === 0) {
    await shredMessages(ctx, meta, realm.id, [messageId], 'deleted');
  }
}

/** What deleting channel messages changes beside them: the channel's first message id, topic preferences they sealed. */
async function channelAppendsOfDeleting(db: Db, streamId: number, ids: number[]): Promise<StreamAppend[]> {
  return [...(await firstMessageIdChange(db, streamId, ids)), ...(await topicPolicyHandovers(db, ids, true))];
}

/** The channel's new first_message_id when deleting `ids` takes away its first message (none otherwise). */
async function firstMessageIdChange(db: Db, streamId: number, ids: number[]): Promise<Array<{ streamId: string; expectedVersion: undefined; events: StreamPropertyChanged[] }>> {
  const first = await db.selectFrom('messages').select((eb) => eb.fn.min('id').as('m')).where('stream_id', '=', streamId).executeTakeFirst();
  const oldFirst = first?.m === null || first?.m === undefined ? null : Number(first.m);
  if (oldFirst === null || !ids.includes(oldFirst)) return [];
  const next = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.min('id').as('m'))
    .where('stream_id', '=', streamId)
    .where('id', 'not in', ids)
    .executeTakeFirst();
  const value = next?.m === null || next?.m === undefined ? null : Number(next.m);
  return [{
    streamId: channelStream(streamId),
    expectedVersion: undefined,
    events: [{ type: 'StreamPropertyChanged', data: { stream_id: streamId, property: 'first_message_id', value } }],
  }];
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
      const ids = batch.map((r) => r.id);
      const event: MessagesDeleted = deletion(ids, { realm_id: realm.id, stream_id: streamId, topic: batch[0]!.topic, dm_user_ids: [] });
      const appends: StreamAppend[] = [
        { streamId: messageStream(ids[0]!), expectedVersion: undefined, events: [event] },
        ...(await channelAppendsOfDeleting(ctx.db, stream.id, ids)),
      ];
      return { appends, result: undefined };
    });
  }
}

export { readThroughOf };
