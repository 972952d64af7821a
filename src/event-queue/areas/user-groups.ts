import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { canMentionGroupId, listUserGroups, systemGroupIds } from '../../read/user-groups.js';
import type { ClientEvent, PreparedEvent } from '../types.js';
import type { Db } from '../../db/database.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { requestEvents } from '../request-events.js';
import { activeBefore, roleBefore, systemGroupId } from '../user-history.js';

/** user_group events go to every user of the group's realm. */
function toRealm(realmId: number, event: ClientEvent): PreparedEvent {
  return { audience: 'realm', forUser: (r) => (r.realm.id === realmId ? [event] : []) };
}

registerTranslator('UserGroupCreated', async (e, db) => {
  const d = e.data as DataOf<'UserGroupCreated'>;
  // System groups come with the realm, before anyone has a queue.
  const system = await systemGroupIds(db, d.realm_id);
  return toRealm(d.realm_id, {
    type: 'user_group',
    op: 'add',
    group: {
      id: d.group_id,
      name: d.name,
      description: d.description,
      members: [...d.members].sort((a, b) => a - b),
      direct_subgroup_ids: [...d.subgroups].sort((a, b) => a - b),
      is_system_group: d.is_system_group,
      can_mention_group: d.can_mention_group ?? canMentionGroupId(d.is_system_group, system, d.group_id),
    },
  });
});

registerTranslator('UserGroupUpdated', async (e) => {
  const d = e.data as DataOf<'UserGroupUpdated'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'update', group_id: d.group_id, data: { ...d.changes } });
});

/**
 * A membership change made by the same request as a role change, a deactivation or a reactivation
 * of the user (role:fullmembers follows the role and the account) reaches clients with that
 * lifecycle event, in the real server's place for it (account-lifecycle.ts, and the role change
 * below); here only the other users of the change are left.
 */
async function membersLeft(db: Db, e: StoredEvent, userIds: readonly number[]): Promise<number[]> {
  const covered = new Set((await requestEvents(db, e, LIFECYCLE)).filter((l) => l.position < e.position).map((l) => (l.data as { user_id: number }).user_id));
  return userIds.filter((id) => !covered.has(id));
}

registerTranslator('UserGroupMembersAdded', async (e, db) => {
  const d = e.data as DataOf<'UserGroupMembersAdded'>;
  const user_ids = await membersLeft(db, e, d.user_ids);
  return user_ids.length === 0 ? null : toRealm(d.realm_id, { type: 'user_group', op: 'add_members', group_id: d.group_id, user_ids });
});

registerTranslator('UserGroupMembersRemoved', async (e, db) => {
  const d = e.data as DataOf<'UserGroupMembersRemoved'>;
  const user_ids = await membersLeft(db, e, d.user_ids);
  return user_ids.length === 0 ? null : toRealm(d.realm_id, { type: 'user_group', op: 'remove_members', group_id: d.group_id, user_ids });
});

registerTranslator('UserGroupSubgroupsAdded', async (e) => {
  const d = e.data as DataOf<'UserGroupSubgroupsAdded'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'add_subgroups', group_id: d.group_id, direct_subgroup_ids: d.subgroup_ids });
});

registerTranslator('UserGroupSubgroupsRemoved', async (e) => {
  const d = e.data as DataOf<'UserGroupSubgroupsRemoved'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'remove_subgroups', group_id: d.group_id, direct_subgroup_ids: d.subgroup_ids });
});

registerTranslator('UserGroupDeleted', async (e) => {
  const d = e.data as DataOf<'UserGroupDeleted'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'remove', group_id: d.group_id });
});

registerSection('realm_user_groups', async ({ trx, realm }) => ({ realm_user_groups: await listUserGroups(trx, realm.id) }));

// System-group membership follows roles (projections/user-groups.ts keeps the rows in step);
// these tell clients about the same membership changes.

/** The lifecycle events whose membership changes travel with them (membersLeft). */
const LIFECYCLE = ['UserRoleChanged', 'UserDeactivated', 'UserReactivated'];
const MEMBERSHIP = ['UserGroupMembersAdded', 'UserGroupMembersRemoved'];

export interface MembershipChange {
  op: 'add_members' | 'remove_members';
  group_id: number;
}

/** The membership changes of `userId` that the request of `event` made after it (role:fullmembers). */
export async function requestMembershipChanges(db: Db, event: StoredEvent, userId: number): Promise<MembershipChange[]> {
  return (await requestEvents(db, event, MEMBERSHIP))
    .filter((m) => m.position > event.position && (m.data as { user_ids: number[] }).user_ids.includes(userId))
    .map((m) => ({ op: m.type === 'UserGroupMembersAdded' ? 'add_members' : 'remove_members', group_id: (m.data as { group_id: number }).group_id }));
}

function membership(realmId: number, userId: number, changes: Array<{ op: MembershipChange['op']; group_id: number | undefined }>): PreparedEvent | null {
  const events: ClientEvent[] = changes
    .filter((c) => c.group_id !== undefined)
    .map((c) => ({ type: 'user_group', op: c.op, group_id: c.group_id, user_ids: [userId] }));
  if (events.length === 0) return null;
  return { audience: 'realm', forUser: (r) => (r.realm.id === realmId ? events : []) };
}

registerTranslator('UserCreated', async (e, db) => {
  const d = e.data as DataOf<'UserCreated'>;
  if (d.is_system_bot) return null;
  return membership(d.realm_id, d.user_id, [{ op: 'add_members', group_id: await systemGroupId(db, d.realm_id, d.role) }]);
});

/**
 * As do_change_user_role: out of the old role's group, into the new one's, then in or out of
 * role:fullmembers when the member role is on either side; the channels coming into or out of view
 * follow (role-channel-access.ts).
 */
registerTranslator('UserRoleChanged', async (e, db) => {
  const d = e.data as DataOf<'UserRoleChanged'>;
  const realmId = e.metadata.realm_id;
  const from = await systemGroupId(db, realmId, d.old_role);
  const to = await systemGroupId(db, realmId, d.role);
  const roleGroups = from === to ? [] : [
    { op: 'remove_members' as const, group_id: from },
    { op: 'add_members' as const, group_id: to },
  ];
  return membership(realmId, d.user_id, [...roleGroups, ...(await requestMembershipChanges(db, e, d.user_id))]);
});

// Erasing an active account deactivates it: it leaves its role's group, as a deactivation does.
registerTranslator('UserErased', async (e, db) => {
  const d = e.data as DataOf<'UserErased'>;
  const role = await roleBefore(db, e);
  if (role === undefined || !(await activeBefore(db, e))) return null;
  return membership(d.realm_id, d.user_id, [{ op: 'remove_members', group_id: await systemGroupId(db, d.realm_id, role) }]);
});
