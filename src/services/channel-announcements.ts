import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { getStreamById } from '../read/channels.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { sendMessage } from './messages.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

export const NEW_CHANNELS_TOPIC = 'new channels';

/** The real server's silent mention: names the user without notifying them. */
export const silentMention = (user: UserRow) => `@_**${user.full_name}|${user.id}**`;

export function newChannelsAnnouncement(creator: UserRow, channelNames: string[]): string {
  const links = channelNames.map((name) => `#**${name}**`).join(', ');
  return channelNames.length > 1
    ? `${silentMention(creator)} created the following channels: ${links}.`
    : `${silentMention(creator)} created a new channel ${links}.`;
}

/**
 * POST /users/me/subscriptions with announce=true: Notification Bot tells the organization's
 * new-channel announcements channel about the channels the request created. Nothing is sent when
 * none was created or the organization has no (active) announcements channel.
 */
export async function announceNewChannels(ctx: ServiceContext, meta: RequestMeta, creator: UserRow, realm: RealmRow, channelNames: string[]): Promise<void> {
  if (channelNames.length === 0) return;
  const target = Number(realm.properties.new_stream_announcements_stream_id ?? -1);
  const channel = Number.isInteger(target) && target > 0 ? await getStreamById(ctx.db, target) : undefined;
  if (!channel || channel.realm_id !== realm.id || channel.deactivated) return;
  const bot = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!bot) return;
  await sendMessage(ctx, { ...meta, client: INTERNAL_CLIENT }, bot, realm, {
    type: 'stream',
    to: channel.id,
    topic: NEW_CHANNELS_TOPIC,
    content: newChannelsAnnouncement(creator, channelNames),
  });
}
