import { sql } from 'kysely';
import { decideMutedUsers, evolveMutedUsers, noMutedUsers, type MutedUsersCommand, type MutedUsersState } from '../domain/muted-users/decider.js';
import type { MutedUsersEvent } from '../domain/muted-users/events.js';
import type { MessageFlagsChanged } from '../domain/messages/events.js';
import { decideFlags } from '../domain/messages/decider.js';
import { errors } from '../domain/errors.js';
import { unreadSql } from '../read/narrow.js';
import { narrowViewer } from '../read/messages.js';
import type { UserRow } from '../read/users.js';
import type { StreamAppend } from '../eventstore/types.js';
import { accessUserById } from './users.js';
import { getRealm } from '../read/realm.js';
import { flagsStream } from './messages.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { isDbInt } from '../domain/ids.js';

export const mutedUsersStream = (userId: number) => `muted-users-${userId}`;

/**
 * The other user, bots and deactivated users included, as the real server's access check allows;
 * a guest limited by can_access_all_users_group may mute only the users they can access.
 */
async function requireMutableUser(ctx: ServiceContext, user: UserRow, otherId: number): Promise<UserRow> {
  if (!isDbInt(otherId)) throw errors.noSuchUser();
  const realm = await getRealm(ctx.db, user.realm_id);
  if (!realm) throw errors.noSuchUser();
  return accessUserById(ctx.db, realm, user, otherId, { forAdmin: false, allowBots: true, allowDeactivated: true });
}

/**
 * Muting marks every unread message the muted user sent as read for the muter, in the same
 * command (the real server does it in the same transaction).
 */
async function senderUnreadFlagEvents(ctx: ServiceContext, user: UserRow, senderId: number): Promise<MessageFlagsChanged[]> {
  const viewer = await narrowViewer(ctx.db, user);
  const rows = await sql<{ id: number }>`SELECT m.id FROM messages m WHERE m.sender_id = ${senderId} AND ${unreadSql(viewer)} ORDER BY m.id`.execute(ctx.db);
  const ids = rows.rows.map((r) => Number(r.id));
  return decideFlags({ user_id: user.id, op: 'add', flag: 'read', message_ids: ids, all: false, read_through: null, message_details: null });
}

async function runMutedUsers(ctx: ServiceContext, meta: RequestMeta, user: UserRow, command: MutedUsersCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = mutedUsersStream(user.id);
    const history = await ctx.store.readStream(streamId);
    const state = history.reduce<MutedUsersState>((s, e) => evolveMutedUsers(s, e as unknown as MutedUsersEvent), noMutedUsers);
    const version = history.length > 0 ? history[history.length - 1]!.stream_version : -1;
    const events = decideMutedUsers(command, state);
    const appends: StreamAppend[] = [{ streamId, expectedVersion: version, events }];
    if (command.type === 'MuteUser') {
      const flags = await senderUnreadFlagEvents(ctx, user, command.muted_user_id);
      if (flags.length > 0) appends.push({ streamId: flagsStream(user.id), expectedVersion: undefined, events: flags });
    }
    return { appends, result: undefined };
  });
}

/** POST /users/me/muted_users/{muted_user_id}. */
export async function muteUser(ctx: ServiceContext, meta: RequestMeta, user: UserRow, mutedUserId: number): Promise<void> {
  if (mutedUserId === user.id) throw errors.badRequest('Cannot mute self');
  await requireMutableUser(ctx, user, mutedUserId);
  await runMutedUsers(ctx, meta, user, { type: 'MuteUser', user_id: user.id, muted_user_id: mutedUserId, date_muted: Math.floor(meta.now.getTime() / 1000) });
}

/** DELETE /users/me/muted_users/{muted_user_id}. */
export async function unmuteUser(ctx: ServiceContext, meta: RequestMeta, user: UserRow, mutedUserId: number): Promise<void> {
  await requireMutableUser(ctx, user, mutedUserId);
  await runMutedUsers(ctx, meta, user, { type: 'UnmuteUser', user_id: user.id, muted_user_id: mutedUserId });
}
