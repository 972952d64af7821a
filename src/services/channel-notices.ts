import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { getStreamById } from '../read/channels.js';
import {
  CHANNEL_EVENTS_TOPIC,
  accessChangedNotice,
  channelCreatedNotice,
  descriptionChangedNotice,
  postPolicyChangedNotice,
  renamedNotice,
  retentionChangedNotice,
  silentMention,
  subscribedYouNotice,
  type ChannelAccess,
} from '../domain/channels/notices.js';
import type { ChannelEvent } from '../domain/channels/events.js';
import type { StreamState } from '../domain/channels/decider.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { sendMessage, type SendParams } from './messages.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

/**
 * Notification Bot's messages about channels, sent after the change they describe has committed
 * (each is an ordinary message: its own command, its own events). An organization without
 * Notification Bot gets none.
 */

export const NEW_CHANNELS_TOPIC = 'new channels';

export function newChannelsAnnouncement(creator: UserRow, channelNames: string[]): string {
  const links = channelNames.map((name) => `#**${name}**`).join(', ');
  return channelNames.length > 1
    ? `${silentMention(creator)} created the following channels: ${links}.`
    : `${silentMention(creator)} created a new channel ${links}.`;
}

async function sendAsNotificationBot(ctx: ServiceContext, meta: RequestMeta, realm: RealmRow, messages: SendParams[]): Promise<void> {
  if (messages.length === 0) return;
  const bot = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!bot) return;
  for (const message of messages) await sendMessage(ctx, { ...meta, client: INTERNAL_CLIENT }, bot, realm, message);
}

const channelNotice = (streamId: number, content: string, readBy?: number[]): SendParams => ({
  type: 'stream',
  to: streamId,
  topic: CHANNEL_EVENTS_TOPIC,
  content,
  ...(readBy ? { read_for_user_ids: [...readBy] } : {}),
});

export interface CreatedChannel extends ChannelAccess {
  id: number;
  name: string;
  description: string;
}

export interface SubscriptionNotices {
  /** Users whom the request subscribed, with the names of the channels each was newly added to. */
  newlySubscribed: Array<{ user: UserRow; channelNames: string[] }>;
  created: CreatedChannel[];
  announce: boolean;
}

/**
 * After POST /users/me/subscriptions, in the real server's order: a direct message to each human
 * whom someone else added to channels that already existed; with `announce`, one message in the
 * organization's new-channel announcements channel; then, in each new channel's "channel events"
 * topic, what kind of channel it is and its description (read already for the one who created it).
 */
export async function notifySubscriptions(ctx: ServiceContext, meta: RequestMeta, actor: UserRow, realm: RealmRow, notices: SubscriptionNotices): Promise<void> {
  const messages: SendParams[] = [];
  const createdNames = new Set(notices.created.map((c) => c.name));
  for (const { user, channelNames } of notices.newlySubscribed) {
    if (user.id === actor.id || user.is_bot) continue;
    const existing = channelNames.filter((name) => !createdNames.has(name));
    if (existing.length > 0) messages.push({ type: 'private', to: [user.id], content: subscribedYouNotice(actor, existing) });
  }
  if (notices.announce && notices.created.length > 0) {
    const target = Number(realm.properties.new_stream_announcements_stream_id ?? -1);
    const channel = Number.isInteger(target) && target > 0 ? await getStreamById(ctx.db, target) : undefined;
    if (channel && channel.realm_id === realm.id && !channel.deactivated) {
      messages.push({ type: 'stream', to: channel.id, topic: NEW_CHANNELS_TOPIC, content: newChannelsAnnouncement(actor, notices.created.map((c) => c.name)) });
    }
  }
  for (const channel of notices.created) {
    messages.push(channelNotice(channel.id, channelCreatedNotice(actor, channel, channel.description), [actor.id]));
  }
  await sendAsNotificationBot(ctx, meta, realm, messages);
}

/**
 * After PATCH /streams/{stream_id}: one notice per kind of change the request made, in the real
 * server's order (access, retention period, description, name, posting policy).
 */
export async function notifyChannelChanges(
  ctx: ServiceContext,
  meta: RequestMeta,
  actor: UserRow,
  realm: RealmRow,
  before: StreamState,
  events: readonly ChannelEvent[],
): Promise<void> {
  const changes = new Map<string, unknown>();
  for (const e of events) if (e.type === 'StreamPropertyChanged') changes.set(e.data.property, e.data.value);
  const value = <T>(property: string, old: T): T => (changes.has(property) ? (changes.get(property) as T) : old);
  const messages: SendParams[] = [];
  if (changes.has('invite_only') || changes.has('history_public_to_subscribers') || changes.has('is_web_public')) {
    const after: ChannelAccess = {
      invite_only: value('invite_only', before.invite_only),
      history_public_to_subscribers: value('history_public_to_subscribers', before.history_public_to_subscribers),
      is_web_public: value('is_web_public', before.is_web_public),
    };
    messages.push(channelNotice(before.stream_id, accessChangedNotice(actor, before, after)));
  }
  if (changes.has('message_retention_days')) {
    // A channel following the organization's period is described by the organization's period.
    const realmDays = Number(realm.properties.message_retention_days ?? -1);
    const effective = (days: number | null) => days ?? realmDays;
    const next = changes.get('message_retention_days') as number | null;
    messages.push(channelNotice(before.stream_id, retentionChangedNotice(actor, effective(before.message_retention_days), effective(next))));
  }
  if (changes.has('description')) {
    messages.push(channelNotice(before.stream_id, descriptionChangedNotice(actor, before.description, String(changes.get('description')))));
  }
  if (changes.has('name')) {
    messages.push(channelNotice(before.stream_id, renamedNotice(actor, before.name, String(changes.get('name')))));
  }
  if (changes.has('stream_post_policy')) {
    messages.push(channelNotice(before.stream_id, postPolicyChangedNotice(actor, before.stream_post_policy, Number(changes.get('stream_post_policy')))));
  }
  await sendAsNotificationBot(ctx, meta, realm, messages);
}
