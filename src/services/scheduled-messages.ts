import { randomUUID } from 'node:crypto';
import { destroyEndedKeys } from './ended-keys.js';
import { scheduledMessageKeyId } from '../eventstore/crypto/personal-fields.js';
import { ApiError, errors } from '../domain/errors.js';
import { normalizeTopic } from '../domain/messages/decider.js';
import {
  checkDeliveryTime,
  checkEditable,
  decideScheduledMessage,
  deliveryPrecheck,
  isDue,
  type ScheduledMessageState,
} from '../domain/scheduled-messages/decider.js';
import type { ScheduledMessageData } from '../domain/scheduled-messages/events.js';
import { getScheduledMessage } from '../read/scheduled-messages.js';
import { getRealm, type RealmRow } from '../read/realm.js';
import { getStreamById } from '../read/channels.js';
import { getUserById, type UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { messageStream, prepareMessage, type PreparedMessage } from './messages.js';
import { streamVersion } from './stream-version.js';
import type { StreamAppend } from '../eventstore/types.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';
import { defaultReadBySender } from '../domain/messages/read-by-sender.js';

export const scheduledMessageStream = (id: number) => `scheduled-message-${id}`;

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

type RecipientType = ScheduledMessageData['type'];

/** `type` as the API takes it ("direct" and "channel" are the modern names). */
function recipientTypeOf(type: string): RecipientType {
  if (type === 'direct' || type === 'private') return 'private';
  if (type === 'stream' || type === 'channel') return 'stream';
  throw errors.badRequest('Invalid type');
}

/** `to` of a scheduled channel message: one channel id. */
function channelTarget(to: unknown): number {
  const value = typeof to === 'string' && /^\s*\d+\s*$/.test(to) ? Number(to) : to;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw errors.badRequest('Invalid data type for channel ID');
  return value;
}

/** `to` of a scheduled direct message: a list of user ids. */
function userTargets(to: unknown): number[] {
  let value = to;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      // Not JSON: a bare string is not a list.
    }
  }
  if (!Array.isArray(value)) throw errors.badRequest('Invalid data type for recipients');
  if (!value.every((id) => typeof id === 'number' && Number.isSafeInteger(id))) throw errors.badRequest('Recipient list may only contain user IDs');
  return [...new Set(value as number[])];
}

type Addressed = Pick<ScheduledMessageData, 'type' | 'stream_id' | 'to' | 'topic' | 'content' | 'rendered_content'>;

/** Addresses, checks and renders the message exactly as POST /messages would at this moment. */
async function addressed(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  message: { type: RecipientType; to: number | number[]; topic?: string; content: string },
): Promise<Addressed> {
  const archived = message.type === 'stream' ? await archivedChannelRefusal(ctx, message.to as number) : null;
  if (archived) throw errors.badRequest(archived);
  const prepared = await prepareMessage(ctx, meta, user, realm, { type: message.type, to: message.to, topic: message.topic, content: message.content });
  const sent = prepared.events[0]!.data;
  if (sent.stream_id !== null) {
    return { type: 'stream', stream_id: sent.stream_id, to: [sent.stream_id], topic: sent.topic, content: sent.content, rendered_content: sent.rendered_content };
  }
  const others = sent.dm_user_ids.filter((id) => id !== user.id);
  return { type: 'private', stream_id: null, to: others.length > 0 ? others : [user.id], topic: '', content: sent.content, rendered_content: sent.rendered_content };
}

/**
 * The real server finds a channel by id whether or not it is archived, then refuses to send to an
 * archived one by name; our send path by id finds active channels only. The reason, or null.
 */
async function archivedChannelRefusal(ctx: ServiceContext, streamId: number | null): Promise<string | null> {
  const channel = streamId === null ? undefined : await getStreamById(ctx.db, streamId);
  return channel?.deactivated ? `Not authorized to send to channel '${channel.name}'` : null;
}

/** What the delivery sends to: the channel id, or every other participant (the sender alone for a note to self). */
const targetOf = (m: Pick<ScheduledMessageData, 'type' | 'stream_id' | 'to'>): number | number[] => (m.type === 'stream' ? m.stream_id! : m.to);

const isToSelf = (m: Addressed, userId: number) => m.type === 'private' && m.to.length === 1 && m.to[0] === userId;

/** The message's state with the version of its stream; waits until the read table has its last event. */
async function loadState(ctx: ServiceContext, id: number): Promise<{ state: ScheduledMessageState; version: number }> {
  if (!Number.isSafeInteger(id) || id <= 0) return { state: null, version: 0 };
  const version = await streamVersion(ctx, scheduledMessageStream(id));
  const row = await getScheduledMessage(ctx.db, id);
  if (!row) return { state: null, version };
  const { version: rowVersion, ...state } = row;
  return { state, version: rowVersion };
}

export interface ScheduleParams {
  type: string;
  to: unknown;
  topic?: string;
  content: string;
  scheduled_delivery_timestamp: number;
  read_by_sender?: boolean;
}

/** POST /scheduled_messages. */
export async function scheduleMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, params: ScheduleParams): Promise<number> {
  const type = recipientTypeOf(params.type);
  const now = seconds(meta.now);
  checkDeliveryTime(params.scheduled_delivery_timestamp, now);
  const to = type === 'stream' ? channelTarget(params.to) : userTargets(params.to);
  const checked = await addressed(ctx, meta, user, realm, { type, to, topic: params.topic, content: params.content });
  const id = await ctx.commands.nextId('scheduled_message_id_seq');
  const message: ScheduledMessageData = {
    id,
    realm_id: realm.id,
    sender_id: user.id,
    ...checked,
    scheduled_timestamp: params.scheduled_delivery_timestamp,
    // As on the real server: read by a sender writing in an app, unless it is a note to self.
    read_by_sender: params.read_by_sender ?? (defaultReadBySender(meta.client) && !isToSelf(checked, user.id)),
    client: meta.client,
  };
  const events = decideScheduledMessage({ type: 'ScheduleMessage', message, now }, null);
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: scheduledMessageStream(id), expectedVersion: -1, events }],
    result: undefined,
  }));
  return id;
}

export interface EditScheduledParams {
  type?: string;
  to?: unknown;
  topic?: string;
  content?: string;
  scheduled_delivery_timestamp?: number;
}

/** PATCH /scheduled_messages/{id}. */
export async function editScheduledMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, id: number, params: EditScheduledParams): Promise<void> {
  const { to, topic, content, scheduled_delivery_timestamp: timestamp } = params;
  const type = params.type === undefined ? undefined : recipientTypeOf(params.type);
  if (type === undefined && to === undefined && topic === undefined && content === undefined && timestamp === undefined) {
    throw errors.badRequest('Nothing to change');
  }
  if (type !== undefined && to === undefined) throw errors.badRequest('Recipient required when updating type of scheduled message.');
  if (type === 'stream' && topic === undefined) throw errors.badRequest('Topic required when updating scheduled message type to channel.');
  const now = seconds(meta.now);
  if (timestamp !== undefined) checkDeliveryTime(timestamp, now);
  const mandatoryTopics = (realm.properties as Record<string, unknown>).mandatory_topics === true;

  await ctx.commands.run(metadataOf(meta), async () => {
    const { state, version } = await loadState(ctx, id);
    const current = checkEditable(state, user.id, timestamp !== undefined);
    const { failed: _failed, delivered: _delivered, ...next } = current;
    const message: ScheduledMessageData = { ...next, client: meta.client };
    if (type !== undefined || to !== undefined || content !== undefined) {
      // The recipient or content changed: check the whole message again, as a send would.
      const newType = type ?? current.type;
      const target = to === undefined ? targetOf(current) : newType === 'stream' ? channelTarget(to) : userTargets(to);
      const checked = await addressed(ctx, meta, user, realm, { type: newType, to: target, topic: topic ?? current.topic, content: content ?? current.content });
      if (type !== undefined || to !== undefined) Object.assign(message, { type: checked.type, stream_id: checked.stream_id, to: checked.to, topic: checked.topic });
      else if (topic !== undefined && current.type === 'stream') message.topic = checked.topic;
      if (content !== undefined) Object.assign(message, { content: checked.content, rendered_content: checked.rendered_content });
    } else if (topic !== undefined && current.type === 'stream') {
      // A topic sent for a direct message is ignored.
      message.topic = normalizeTopic(topic, mandatoryTopics);
    }
    if (timestamp !== undefined) message.scheduled_timestamp = timestamp;
    const events = decideScheduledMessage({ type: 'EditScheduledMessage', actor_id: user.id, message, new_timestamp: timestamp !== undefined, now }, current);
    return { appends: [{ streamId: scheduledMessageStream(id), expectedVersion: version, events }], result: undefined };
  });
}

/** DELETE /scheduled_messages/{id}. */
export async function deleteScheduledMessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, id: number): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const { state, version } = await loadState(ctx, id);
    const events = decideScheduledMessage({ type: 'DeleteScheduledMessage', actor_id: user.id, scheduled_message_id: id }, state);
    return { appends: [{ streamId: scheduledMessageStream(id), expectedVersion: version, events }], result: undefined };
  });
  await destroyEndedKeys(ctx, [scheduledMessageKeyId(id)]);
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'skipped';

/**
 * Sends one due scheduled message as its sender, through the same checks as POST /messages. The
 * MessageSent and the ScheduledMessageDelivered go in ONE append that expects the scheduled
 * message's stream version: whoever appends first (another process, a retry after a crash) wins
 * and every other attempt conflicts, re-reads the message as delivered and appends nothing. So a
 * message is sent exactly once. When the send is refused the message stays, marked failed.
 */
export async function deliverScheduledMessage(ctx: ServiceContext, id: number, now: Date): Promise<DeliveryOutcome> {
  const first = await getScheduledMessage(ctx.db, id);
  if (!first) return 'skipped';
  const meta: RequestMeta = { actorId: first.sender_id, realmId: first.realm_id, client: first.client, requestId: randomUUID(), now };
  let prepared: PreparedMessage | undefined;
  let notice: PreparedMessage | undefined;
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    prepared = undefined;
    notice = undefined;
    const { state, version } = await loadState(ctx, id);
    const nowSeconds = seconds(now);
    if (!isDue(state, nowSeconds)) return { appends: [], result: 'skipped' as DeliveryOutcome };
    const streamId = scheduledMessageStream(id);
    const sender = await getUserById(ctx.db, state.sender_id);
    const realm = await getRealm(ctx.db, state.realm_id);
    if (!sender || !realm) throw new Error(`scheduled message ${id}: sender or realm missing`);
    // The failure and Notification Bot's direct message about it go in one append: told exactly once.
    const fail = async (failure: { failure_message: string; notify: boolean }) => {
      const failed = decideScheduledMessage({ type: 'FailScheduledMessage', now: nowSeconds, ...failure }, state);
      const appends: StreamAppend[] = [{ streamId, expectedVersion: version, events: failed }];
      notice = failure.notify ? await prepareFailureNotice(ctx, meta, sender, realm, state.scheduled_timestamp, failure.failure_message) : undefined;
      if (notice) appends.unshift({ streamId: messageStream(notice.id), expectedVersion: -1, events: notice.events });
      return { appends, result: 'failed' as DeliveryOutcome };
    };
    const refused = deliveryPrecheck(state, nowSeconds, sender.is_active, !realm.deactivated);
    if (refused) return fail(refused);
    const archived = await archivedChannelRefusal(ctx, state.stream_id);
    if (archived) return fail({ failure_message: archived, notify: true });
    try {
      prepared = await prepareMessage(ctx, { ...meta, client: state.client }, sender, realm, {
        type: state.type,
        to: targetOf(state),
        topic: state.topic,
        content: state.content,
        read_by_sender: state.read_by_sender,
      });
    } catch (error) {
      // Refused by the send path (no access to the channel any more, a deactivated recipient...).
      if (error instanceof ApiError) return fail({ failure_message: error.message, notify: true });
      throw error;
    }
    const delivered = decideScheduledMessage({ type: 'DeliverScheduledMessage', now: nowSeconds, message_id: prepared.id }, state);
    return {
      appends: [
        { streamId: messageStream(prepared.id), expectedVersion: -1, events: prepared.events },
        { streamId, expectedVersion: version, events: delivered },
        // A delivered message follows or unmutes topics as any send does.
        ...prepared.sideAppends,
      ],
      result: 'delivered' as DeliveryOutcome,
    };
  });
  if (result === 'delivered') {
    prepared?.committed();
    // The text now lives in the message, under the message's own key.
    await destroyEndedKeys(ctx, [scheduledMessageKeyId(id)]);
  }
  if (result === 'failed') notice?.committed();
  return result;
}

/** The real server's wording: the scheduled time as a <time:> the client shows in the reader's zone, and the error quoted. */
export function failureNoticeContent(scheduledTimestamp: number, failureMessage: string): string {
  const at = new Date(scheduledTimestamp * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '+00:00');
  return `The message you scheduled for <time:${at}>  was not sent because of the following error:\n\n> ${failureMessage}\n\n[View scheduled messages](#scheduled)\n\n`;
}

/** Notification Bot's direct message to the sender; none when the organization has no such bot. */
async function prepareFailureNotice(ctx: ServiceContext, meta: RequestMeta, sender: UserRow, realm: RealmRow, scheduledTimestamp: number, failureMessage: string): Promise<PreparedMessage | undefined> {
  const bot = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!bot) return undefined;
  return prepareMessage(ctx, { ...meta, actorId: bot.id, client: INTERNAL_CLIENT }, bot, realm, {
    type: 'private',
    to: [sender.id],
    content: failureNoticeContent(scheduledTimestamp, failureMessage),
  });
}
