import { decideUserGroups, type UserGroupCommand } from '../domain/user-groups/decider.js';
import type { RealmRow } from '../read/realm.js';
import { loadGroups } from '../read/user-groups.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

/**
 * All changes to a realm's groups after its creation go through one stream: a subgroup change
 * is checked for cycles against every group, and names are unique in the realm.
 */
export const userGroupsStream = (realmId: number) => `user-groups-${realmId}`;

export async function changeUserGroups(ctx: ServiceContext, meta: RequestMeta, realm: RealmRow, command: UserGroupCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = userGroupsStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const groups = await loadGroups(ctx.db, meta.realmId);
    const users = await ctx.db.selectFrom('users').select('id').where('realm_id', '=', meta.realmId).where('is_active', '=', true).execute();
    const events = decideUserGroups(command, {
      realm_id: meta.realmId,
      groups,
      active_user_ids: new Set(users.map((u) => u.id)),
      edit_policy: Number(realm.properties.user_group_edit_policy ?? 1),
    });
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}

export async function createUserGroup(
  ctx: ServiceContext,
  meta: RequestMeta,
  realm: RealmRow,
  input: Omit<Extract<UserGroupCommand, { type: 'CreateUserGroup' }>, 'type' | 'group_id' | 'now'>,
): Promise<number> {
  const group_id = await ctx.commands.nextId('user_group_id_seq');
  await changeUserGroups(ctx, meta, realm, { type: 'CreateUserGroup', group_id, now: Math.floor(meta.now.getTime() / 1000), ...input });
  return group_id;
}
