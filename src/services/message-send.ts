import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { checkWidgetContent, widgetFromContent, WidgetError, type Widget } from '../domain/submessages/widgets.js';
import { decideSendMessage, normalizeContent, MAX_TOPIC_LENGTH } from '../domain/messages/decider.js';
import type { MessageSent } from '../domain/messages/events.js';
import {
  channelIdMissing,
  channelNameMissing,
  checkSendTopic,
  extractChannelIndicator,
  extractDirectRecipients,
  toText,
} from '../domain/messages/send-addressing.js';
import {
  checkChannelSend,
  checkDirectMessagePolicy,
  checkWildcardMentions,
  isProvisional,
  type SendingUser,
} from '../domain/messages/send-permissions.js';
import { automaticVisibilityPolicy, type TopicVisibility } from '../domain/messages/automatic-visibility.js';
import { outgoingWebhookTriggers } from '../domain/messages/outgoing-webhook-triggers.js';
import { DEFAULT_USER_SETTINGS } from '../domain/settings/defaults.js';
import { checkStreamName } from '../domain/channels/decider.js';
import type { StreamAppend } from '../eventstore/types.js';
import { renderMarkdownAsync } from '../markdown/index.js';
import { apiEmail, getUserByEmailFor, getUserById, type UserRow } from '../read/users.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { mutersAmong, usersMuting } from '../read/muted-users.js';
import { isAdminRole } from '../domain/roles.js';
import { waitingPeriodDays } from '../domain/user-groups/full-members.js';
import { isDbInt } from '../domain/ids.js';
import { alertedUsers, checkGroupMentionsAllowed, realmRenderData, senderRenderContext } from './render-context.js';
import { withTopicLinkTargets } from './topic-link-targets.js';
import { claimableUploadPaths } from './attachments.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { findChannelForSending, type ChannelForSending, type SenderTopicState } from './channel-for-sending.js';
import { topicPolicySource } from '../domain/channels/topic-policy-source.js';
import { defaultReadBySender } from '../domain/messages/read-by-sender.js';
import { remindBotOwner, type MissedChannel } from './bot-owner-reminders.js';

export const messageStream = (id: number) => `message-${id}`;

export interface SendParams {
  type: string;
  to?: unknown;
  topic?: string;
  content: string;
  queue_id?: string;
  local_id?: string;
  read_by_sender?: boolean;
  /** internal sends only: other receivers for whom it arrives read (the one who acted, for Notification Bot's notices) */
  read_for_user_ids?: number[];
  /** JSON text of a bot's widget (the real server accepts zforms only) */
  widget_content?: string;
  /**
   * internal sends only: an outgoing webhook bot answering in the conversation that triggered it,
   * which the real server lets through without the channel access check (skip_stream_access_check)
   */
  skip_channel_access_check?: boolean;
}

export type SendResult = {
  id: number;
  /** Present when sending changed the sender's visibility policy for the topic (2 unmuted, 3 followed). */
  automatic_new_visibility_policy?: number;
};

// Recipient ids never change once assigned; cached per database.
const recipientCaches = new WeakMap<object, Map<string, number>>();
function recipientCacheOf(db: Db): Map<string, number> {
  let cache = recipientCaches.get(db);
  if (!cache) recipientCaches.set(db, (cache = new Map()));
  return cache;
}

async function recipientIdFor(ctx: ServiceContext, key: string): Promise<number> {
  const recipientCache = recipientCacheOf(ctx.db);
  const cached = recipientCache.get(key);
  if (cached !== undefined) return cached;
  const row = await ctx.db.selectFrom('message_recipients').select('id').where('key', '=', key).executeTakeFirst();
  const id = row?.id ?? (await ctx.commands.nextId('recipient_id_seq'));
  if (row) recipientCache.set(key, id);
  return id;
}

/** A message checked, addressed and rendered as POST /messages would send it, not yet appended. */
export interface PreparedMessage {
  id: number;
  events: MessageSent[];
  /** Appends that go with the message in the same command (the sender's automatic topic policy). */
  sideAppends: StreamAppend[];
  automaticNewVisibilityPolicy: number | null;
  /** Call once the events are committed (caches the recipient id they introduced). */
  committed(): void;
}

/** POST /messages. */
export async function sendMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, params: SendParams): Promise<SendResult> {
  const prepared = await prepareMessage(ctx, meta, user, realm, params);
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: messageStream(prepared.id), expectedVersion: -1, events: prepared.events }, ...prepared.sideAppends],
    result: undefined,
  }));
  prepared.committed();
  const policy = prepared.automaticNewVisibilityPolicy;
  return policy === null ? { id: prepared.id } : { id: prepared.id, automatic_new_visibility_policy: policy };
}

function sendingUser(user: UserRow, realm: RealmRow, now: Date): SendingUser {
  return {
    user_id: user.id,
    role: user.role,
    is_bot: user.is_bot,
    is_system_bot: user.is_system_bot,
    provisional: isProvisional(user.role, user.date_joined, waitingPeriodDays(realm.properties), now),
  };
}

/** A bot's owner, as the channel rules see them (a bot may post where its owner may). */
async function ownerOf(ctx: ServiceContext, user: UserRow, realm: RealmRow, now: Date): Promise<SendingUser | null> {
  if (!user.is_bot || user.bot_owner_id === null) return null;
  const owner = await getUserById(ctx.db, user.bot_owner_id);
  return owner && owner.realm_id === realm.id ? sendingUser(owner, realm, now) : null;
}

/** The users a direct message's `to` names, in the order given, or the real server's refusal. */
async function directRecipients(ctx: ServiceContext, user: UserRow, realm: RealmRow, targets: string[] | number[]): Promise<UserRow[]> {
  const found: UserRow[] = [];
  for (const target of targets) {
    if (typeof target === 'number') {
      const row = isDbInt(target) ? await getUserById(ctx.db, target) : undefined;
      if (!row || row.realm_id !== realm.id) throw errors.badRequest(`Invalid user ID ${target}`);
      found.push(row);
    } else {
      const row = await getUserByEmailFor(ctx.db, { user_id: user.id, role: user.role, realm_id: realm.id }, target, realmHost(realm));
      if (!row) throw errors.badRequest(`Invalid email '${target}'`);
      found.push(row);
    }
  }
  return found;
}

interface Addressed {
  messageId: number | Promise<number>;
  streamId: number | null;
  topic: string;
  receivers: number[];
  dmUserIds: number[];
  recipientKey: string;
  /** Who muted the sender: a channel send reads it with the channel. */
  muterIds?: number[];
  stream?: ChannelForSending;
}

/** Every check, the addressing and the rendering of a send; the caller appends the events. */
export async function prepareMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, params: SendParams): Promise<PreparedMessage> {
  const props = realm.properties as Record<string, unknown>;
  const type = params.type === 'channel' ? 'stream' : params.type === 'direct' ? 'private' : params.type;
  if (type !== 'stream' && type !== 'private') throw errors.badRequest('Invalid type');
  const sender = sendingUser(user, realm, meta.now);

  // The addressing is read and checked first, then the content, then access: the real server's order.
  let channelTarget: string | number | undefined;
  let topic = '';
  let dmTargets: UserRow[] = [];
  if (type === 'stream') {
    channelTarget = params.to === undefined ? undefined : extractChannelIndicator(toText(params.to));
    channelTarget ??= user.default_sending_stream_id ?? undefined;
    if (channelTarget === undefined) throw errors.badRequest('Missing channel');
    if (params.topic === undefined) throw errors.badRequest('Missing topic');
    topic = checkSendTopic(params.topic, MAX_TOPIC_LENGTH);
  } else {
    const targets = params.to === undefined ? [] : extractDirectRecipients(toText(params.to));
    if (targets.length === 0) throw errors.badRequest('Message must have recipients');
    dmTargets = await directRecipients(ctx, user, realm, targets);
  }

  const content = normalizeContent(params.content);
  // A widget_content that does not pass is refused before anything else is looked up.
  let widget: Widget | null;
  try {
    widget = params.widget_content !== undefined ? checkWidgetContent(params.widget_content) : widgetFromContent(content);
  } catch (error) {
    if (error instanceof WidgetError) throw errors.badRequest(error.message);
    throw error;
  }
  const widgetId = widget ? ctx.commands.nextId('submessage_id_seq') : undefined;
  widgetId?.catch(() => undefined);
  // Independent look-ups run together: latency here is the sender's latency.
  const dataPromise = realmRenderData(ctx, realm.id);
  dataPromise.catch(() => undefined);

  const addressed = channelTarget !== undefined
    ? await addressChannel(ctx, meta, user, realm, sender, channelTarget, topic, props.mandatory_topics === true, params.skip_channel_access_check === true)
    : addressDirect(ctx, user, realm, sender, dmTargets, Number(props.private_message_policy ?? 1));

  const data = await dataPromise;
  const rendered = await renderMarkdownAsync(content, await withTopicLinkTargets(ctx.db, senderRenderContext(data.context, user), user, content));
  const { streamId, receivers } = addressed;
  const receiverSet = new Set(receivers);
  let topicWildcardUserIds: number[] = [];
  if (streamId !== null) {
    const participants = rendered.topicWildcard ? await topicParticipantIds(ctx.db, streamId, topic, user.id) : [];
    checkWildcardMentions(sender, Number(props.wildcard_mention_policy ?? 5),
      { stream: rendered.streamWildcard, topic: rendered.topicWildcard },
      { subscribers: addressed.stream!.subscriber_ids.length, topicParticipants: participants.length });
    topicWildcardUserIds = participants.filter((id) => receiverSet.has(id));
  }
  checkGroupMentionsAllowed(data, user.id, rendered.mentionedGroupIds);
  const mentioned = new Set(rendered.mentionedUserIds.filter((id) => receiverSet.has(id)));
  for (const groupId of rendered.mentionedGroupIds) {
    for (const id of data.groupMembers.get(groupId) ?? []) if (receiverSet.has(id)) mentioned.add(id);
  }
  const others = receivers.filter((id) => id !== user.id);
  // The sender too: the real server flags their own message when it holds their alert word.
  const alerted = alertedUsers(data.alertWords, receivers, content);
  const muters = addressed.muterIds ? mutersAmong(addressed.muterIds, others) : await usersMuting(ctx.db, user.id, others);
  const recipientId = await recipientIdFor(ctx, addressed.recipientKey);
  const id = await addressed.messageId;
  const visibility = addressed.stream ? automaticPolicyFor(user, addressed.stream.topic_state) : null;
  const triggers = outgoingWebhookTriggers({
    senderIsBot: user.is_bot,
    outgoingWebhookBots: data.outgoingWebhookBots,
    personallyMentioned: streamId !== null ? rendered.mentionedUserIds : [],
    mentionedReceivers: streamId !== null ? mentioned : [],
    dmUserIds: addressed.dmUserIds,
    senderId: user.id,
  });
  const events = decideSendMessage({
    message_id: id,
    realm_id: realm.id,
    sender_id: user.id,
    stream_id: streamId,
    topic,
    recipient_id: recipientId,
    recipient_key: addressed.recipientKey,
    dm_user_ids: addressed.dmUserIds,
    content,
    rendered_content: rendered.html,
    client: meta.client,
    date_sent: Math.floor(meta.now.getTime() / 1000),
    is_me_message: rendered.isMeMessage,
    has_link: rendered.hasLink,
    has_image: rendered.hasImage,
    has_attachment: rendered.hasAttachment,
    mentioned_user_ids: [...mentioned].sort((a, b) => a - b),
    stream_wildcard: rendered.streamWildcard,
    topic_wildcard: rendered.topicWildcard,
    topic_wildcard_user_ids: topicWildcardUserIds,
    alerted_user_ids: alerted,
    muter_user_ids: muters,
    read_by_sender: params.read_by_sender ?? defaultReadBySender(meta.client),
    ...(params.read_for_user_ids ? { read_for_user_ids: params.read_for_user_ids.filter((id) => receiverSet.has(id)) } : {}),
    attachment_paths: await claimableUploadPaths(ctx.db, user, rendered.linkedUploadPaths),
    sender_queue_id: params.queue_id ?? null,
    local_id: params.local_id ?? null,
    ...(triggers.length > 0 ? { outgoing_webhooks: triggers } : {}),
  });
  if (widget && widgetId) {
    const sent = events[0] as { data: Record<string, unknown> };
    sent.data = { ...sent.data, widget_submessage_id: await widgetId, widget_content: JSON.stringify(widget) };
  }
  // Automatic follows and unmutes (the mentioned users' first, then the sender's), each with the
  // message whose key seals its topic (topicPolicySource).
  const policies = new Map<number, { policy: number; source: number | undefined }>();
  if (streamId !== null) {
    const mentionedHere = rendered.mentionedUserIds.filter((uid) => receiverSet.has(uid));
    for (const follower of await followersByMention(ctx.db, mentionedHere, streamId, topic)) {
      policies.set(follower.id, { policy: FOLLOWED, source: topicPolicySource(follower.existing, id) });
    }
  }
  const state = addressed.stream?.topic_state;
  if (visibility !== null && state && !policies.has(user.id)) {
    policies.set(user.id, { policy: visibility, source: topicPolicySource(state.policy !== 0 ? { source: state.policySource } : undefined, id) });
  }
  const lastUpdated = Math.floor(meta.now.getTime() / 1000);
  const sideAppends: StreamAppend[] = [...policies].map(([uid, { policy, source }]) => ({
    streamId: `user-topics-${uid}`,
    // Per-user topic preferences are last-writer-wins; no version to check.
    expectedVersion: undefined,
    events: [{
      type: 'UserTopicPolicySet',
      data: {
        user_id: uid, stream_id: streamId!, topic, visibility_policy: policy, last_updated: lastUpdated,
        ...(source !== undefined ? { message_id: source } : {}),
      },
    }],
  }));
  const { recipientKey } = addressed;
  return {
    id,
    events,
    sideAppends,
    automaticNewVisibilityPolicy: policies.get(user.id)?.policy ?? null,
    committed: () => recipientCacheOf(ctx.db).set(recipientKey, recipientId),
  };
}

async function addressChannel(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  sender: SendingUser,
  target: string | number,
  topic: string,
  mandatoryTopics: boolean,
  skipAccessCheck = false,
): Promise<Addressed> {
  const name = typeof target === 'string' ? target.trim() : target;
  // A name is checked as a channel name before it is looked up ('Channel name can't be empty.').
  if (typeof name === 'string') checkStreamName(name);
  const missing = () => (typeof name === 'number' ? channelIdMissing(name) : channelNameMissing(name));
  // One round trip for the channel, its subscribers and the message id: this is the hot path.
  const stream = await findChannelForSending(ctx.db, realm.id, user.id, name, mayChangeTopicPolicy(user) ? topic : null);
  // A bot's owner hears of a send to a missing or empty channel; the bot's own answer is unchanged
  // (a reminder that cannot be sent is dropped, as the real server only logs it).
  if (!stream || stream.subscriber_ids.length === 0) {
    const missed: MissedChannel = stream ? { kind: 'no subscribers', name: stream.name }
      : typeof name === 'number' ? { kind: 'no such id', id: name } : { kind: 'no such name', name };
    if (user.is_bot) await remindBotOwner(ctx, meta, user, realm, missed).catch(() => undefined);
  }
  if (!stream) throw missing();
  const owner = await ownerOf(ctx, user, realm, meta.now);
  const subscribed = { sender: stream.subscriber_ids.includes(user.id), owner: owner !== null && stream.subscriber_ids.includes(owner.user_id) };
  // Addressed by ID, a private channel the sender may not reach is answered as missing: the error
  // would otherwise tell an outsider its name (the real server names it).
  const reaches = subscribed.sender || (user.is_bot && subscribed.owner) || isAdminRole(user.role) || user.is_system_bot;
  if (!skipAccessCheck) {
    if (typeof name === 'number' && stream.invite_only && !reaches) throw missing();
    checkChannelSend(sender, owner, stream, subscribed);
  }
  if (mandatoryTopics && topic === '(no topic)') throw errors.badRequest('Topics are required in this organization');
  return {
    messageId: stream.message_id,
    streamId: stream.id,
    topic,
    receivers: [...new Set([...stream.subscriber_ids, user.id])],
    dmUserIds: [],
    recipientKey: `stream:${stream.id}`,
    muterIds: stream.muter_ids,
    stream,
  };
}

function addressDirect(ctx: ServiceContext, user: UserRow, realm: RealmRow, sender: SendingUser, targets: UserRow[], policy: number): Addressed {
  const distinct = [...new Map(targets.map((t) => [t.id, t])).values()];
  checkDirectMessagePolicy(sender, distinct.map((t) => ({ user_id: t.id, is_bot: t.is_bot })), policy);
  for (const target of distinct) {
    if (!target.is_active && target.id !== user.id) throw errors.badRequest(`'${apiEmail(target, realmHost(realm))}' is no longer using Zulip.`);
  }
  const messageId = ctx.commands.nextId('message_id_seq');
  messageId.catch(() => undefined);
  const others = distinct.map((t) => t.id).filter((id) => id !== user.id).sort((a, b) => a - b);
  const dmUserIds = [...new Set([...others, user.id])].sort((a, b) => a - b);
  return {
    messageId,
    streamId: null,
    topic: '',
    receivers: dmUserIds,
    dmUserIds,
    recipientKey: others.length === 0 ? `user:${user.id}` : others.length === 1 ? `user:${others[0]}` : `group:${dmUserIds.join(',')}`,
  };
}

/**
 * Users who take part in a topic (sent a message to it or reacted to one), the sender included:
 * a topic wildcard mention flags those among the receivers, and their number decides whether the
 * organization's wildcard mention policy applies.
 */
async function topicParticipantIds(db: Db, streamId: number, topic: string, senderId: number): Promise<number[]> {
  const rows = (await sql<{ user_id: number }>`
    SELECT m.sender_id AS user_id FROM messages m WHERE m.stream_id = ${streamId} AND lower(m.topic) = ${topic.toLowerCase()}
    UNION
    SELECT r.user_id FROM reactions r JOIN messages m ON m.id = r.message_id
    WHERE m.stream_id = ${streamId} AND lower(m.topic) = ${topic.toLowerCase()}`.execute(db)).rows;
  return [...new Set([senderId, ...rows.map((r) => Number(r.user_id))])].sort((a, b) => a - b);
}

const MUTED = 1;
const FOLLOWED = 3;
const NEVER = 4;

/**
 * Mentioned users who follow the topic now: humans among the receivers, mentioned by name (not
 * through a group), with automatically_follow_topics_where_mentioned on, unless they muted or
 * already follow it; each with their present preference for the topic, if any (an unmute).
 */
async function followersByMention(db: Db, mentioned: number[], streamId: number, topic: string): Promise<Array<{ id: number; existing?: { source: number | null } }>> {
  if (mentioned.length === 0) return [];
  const byDefault = DEFAULT_USER_SETTINGS.automatically_follow_topics_where_mentioned;
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('user_topics as t', (join) => join
      .onRef('t.user_id', '=', 'u.id')
      .on('t.stream_id', '=', streamId)
      .on(sql<boolean>`lower(t.topic) = ${topic.toLowerCase()}`))
    .select(['u.id', 't.visibility_policy', 't.message_id'])
    .where('u.id', 'in', mentioned)
    .where('u.is_bot', '=', false)
    .where('u.is_active', '=', true)
    .where(sql<boolean>`COALESCE((u.settings->>'automatically_follow_topics_where_mentioned')::boolean, ${byDefault})`)
    .where((eb) => eb.or([eb('t.visibility_policy', 'is', null), eb('t.visibility_policy', 'not in', [MUTED, FOLLOWED])]))
    .orderBy('u.id')
    .execute();
  return rows.map((r) => (r.visibility_policy === null ? { id: r.id } : { id: r.id, existing: { source: r.message_id } }));
}

function settingOf(user: UserRow, name: 'automatically_follow_topics_policy' | 'automatically_unmute_topics_in_muted_streams_policy'): number {
  const stored = (user.settings as Record<string, unknown>)[name];
  return Number(stored ?? DEFAULT_USER_SETTINGS[name]);
}

/** Whether the user's settings let a send change their topic's policy (bots' never do). */
function mayChangeTopicPolicy(user: UserRow): boolean {
  if (user.is_bot) return false;
  return settingOf(user, 'automatically_follow_topics_policy') !== NEVER || settingOf(user, 'automatically_unmute_topics_in_muted_streams_policy') !== NEVER;
}

/**
 * The visibility policy sending sets for the sender's topic (null: none), from their
 * automatically_follow_topics_policy and automatically_unmute_topics_in_muted_streams_policy, given
 * the topic as the channel's look-up saw it (null when the sender's settings change nothing).
 */
function automaticPolicyFor(user: UserRow, state: SenderTopicState | null): number | null {
  if (!state) return null;
  const current: TopicVisibility = { policy: state.policy, channelMuted: state.channelMuted, startsTopic: !state.hasMessages };
  return automaticVisibilityPolicy({ follow: settingOf(user, 'automatically_follow_topics_policy'), unmute: settingOf(user, 'automatically_unmute_topics_in_muted_streams_policy') }, current);
}
