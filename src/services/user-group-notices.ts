import type { RealmRow } from '../read/realm.js';
import { getUserById, type UserRow } from '../read/users.js';
import { silentMention } from '../domain/channels/notices.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { sendMessage } from './messages.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

export function groupMembershipNotice(actor: UserRow, groupName: string, added: boolean): string {
  return added
    ? `${silentMention(actor)} added you to the group @_*${groupName}*.`
    : `${silentMention(actor)} removed you from the group @_*${groupName}*.`;
}

/**
 * After POST /user_groups/{id}/members: Notification Bot tells each user added to or removed from the
 * group, in a direct message, as the real server does; not the one who made the change, nor bots,
 * nor deactivated users.
 */
export async function noticeGroupMembershipChanges(
  ctx: ServiceContext,
  meta: RequestMeta,
  actor: UserRow,
  realm: RealmRow,
  groupName: string,
  changes: { added: readonly number[]; removed: readonly number[] },
): Promise<void> {
  const bot = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!bot) return;
  for (const [ids, added] of [[changes.added, true], [changes.removed, false]] as const) {
    for (const id of [...new Set(ids)]) {
      if (id === actor.id) continue;
      const recipient = await getUserById(ctx.db, id);
      if (!recipient || recipient.is_bot || !recipient.is_active) continue;
      await sendMessage(ctx, { ...meta, actorId: bot.id, client: INTERNAL_CLIENT }, bot, realm, {
        type: 'private',
        to: [recipient.id],
        content: groupMembershipNotice(actor, groupName, added),
      });
    }
  }
}
