import { getUserById, type UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { sendMessage } from './message-send.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

/**
 * When a bot sends to a channel that does not exist, or to one nobody is subscribed to, Notification
 * Bot tells its owner in a direct message (a misconfigured integration is otherwise silent), at most
 * once a minute per bot, as the real server does.
 */

export type MissedChannel =
  | { kind: 'no such name'; name: string }
  | { kind: 'no such id'; id: number }
  | { kind: 'no subscribers'; name: string };

/** Minutes between two reminders about one bot (the real server's BOT_OWNER_STREAM_ALERT_WAITPERIOD). */
const WAIT_MINUTES = 1;

/**
 * When each bot's owner was last reminded. Kept in memory: a reminder is a courtesy, not history
 * (the reminder itself is a message in the log); a restart or a second worker may send one more.
 */
const lastReminded = new Map<number, number>();

export function reminderContent(bot: UserRow, missed: MissedChannel): string {
  const identity = `\`${bot.delivery_email}\``;
  switch (missed.kind) {
    case 'no such id':
      return `Your bot ${identity} tried to send a message to channel ID ${missed.id}, but there is no channel with that ID.`;
    case 'no such name':
      return `Your bot ${identity} tried to send a message to channel #**${missed.name}**, but that channel does not exist. Click [here](#channels/new) to create it.`;
    case 'no subscribers':
      return `Your bot ${identity} tried to send a message to channel #**${missed.name}**. The channel exists but does not have any subscribers.`;
  }
}

/** Reminds the bot's owner (a no-op for people, system bots and bots reminded in the last minute). */
export async function remindBotOwner(ctx: ServiceContext, meta: RequestMeta, sender: UserRow, realm: RealmRow, missed: MissedChannel): Promise<void> {
  if (!sender.is_bot || sender.bot_owner_id === null) return;
  const now = meta.now.getTime();
  const last = lastReminded.get(sender.id);
  if (last !== undefined && now - last <= WAIT_MINUTES * 60_000) return;
  const owner = await getUserById(ctx.db, sender.bot_owner_id);
  const notifier = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!owner || owner.realm_id !== realm.id || !owner.is_active || !notifier) return;
  lastReminded.set(sender.id, now);
  await sendMessage(ctx, { ...meta, actorId: notifier.id, client: INTERNAL_CLIENT }, notifier, realm, {
    type: 'private',
    to: [owner.id],
    content: reminderContent(sender, missed),
  });
}
