import { errors } from '../domain/errors.js';
import type { UserSettingsChanged } from '../domain/users/events.js';
import { decideUserStatus } from '../domain/user-status/decider.js';
import { builtinEmojiCatalog } from '../emoji/emoji-request.js';
import type { StreamAppend } from '../eventstore/types.js';
import { listRealmEmojiRows } from '../read/realm-emoji.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { presenceEnabled } from './presence.js';
import { requireUser, userStream } from './users.js';

export const userStatusStream = (userId: number) => `user-status-${userId}`;

export interface UserStatusRequest {
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

/**
 * POST /users/me/status. `away` is the deprecated alias of presence_enabled: it changes that setting
 * (a UserSettingsChanged on the user's stream, as PATCH /settings would) in the same append.
 */
export async function updateUserStatus(ctx: ServiceContext, meta: RequestMeta, user: UserRow, request: UserStatusRequest): Promise<void> {
  if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  const needsCustom = request.emoji_name !== undefined && request.emoji_name !== '';
  const catalog = builtinEmojiCatalog(needsCustom ? await listRealmEmojiRows(ctx.db, user.realm_id) : []);
  const events = decideUserStatus({ type: 'UpdateUserStatus', user_id: user.id, realm_id: user.realm_id, ...request }, catalog);
  await ctx.commands.run(metadataOf(meta), async () => {
    const appends: StreamAppend[] = [{ streamId: userStatusStream(user.id), expectedVersion: undefined, events }];
    if (request.away !== undefined) {
      const row = await requireUser(ctx.db, user.id, user.realm_id);
      if (presenceEnabled(row) === request.away) {
        const change: UserSettingsChanged = { type: 'UserSettingsChanged', data: { user_id: row.id, changes: { presence_enabled: !request.away } } };
        appends.unshift({ streamId: userStream(row.id), expectedVersion: row.version, events: [change] });
      }
    }
    return { appends, result: undefined };
  });
}
