import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { canMentionGroupId, listUserGroups, systemGroupIds } from '../../read/user-groups.js';
import type { ClientEvent, PreparedEvent } from '../types.js';
import type { Db } from '../../db/database.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { systemGroupForRole } from '../../domain/roles.js';

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

registerTranslator('UserGroupMembersAdded', async (e) => {
  const d = e.data as DataOf<'UserGroupMembersAdded'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'add_members', group_id: d.group_id, user_ids: d.user_ids });
});

registerTranslator('UserGroupMembersRemoved', async (e) => {
  const d = e.data as DataOf<'UserGroupMembersRemoved'>;
  return toRealm(d.realm_id, { type: 'user_group', op: 'remove_members', group_id: d.group_id, user_ids: d.user_ids });
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

async function systemGroupId(db: Db, realmId: number, role: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .where('name', '=', systemGroupForRole(role))
    .executeTakeFirst();
  return row?.id;
}

/** The latest event of `types` on this event's (user) stream before it. */
async function lastBefore(db: Db, event: StoredEvent, types: string[]): Promise<{ type: string; data: unknown } | undefined> {
  return db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', event.stream_id)
    .where('stream_version', '<', event.stream_version)
    .where('type', 'in', types)
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The user's role just before this event of their stream (roles live on the user stream). */
async function roleBefore(db: Db, event: StoredEvent): Promise<number | undefined> {
  const data = (await lastBefore(db, event, ['UserCreated', 'UserRoleChanged']))?.data as { role?: number } | undefined;
  return data?.role;
}

/** Whether the account was active just before `event` (its last deactivation or reactivation says). */
async function activeBefore(db: Db, event: StoredEvent): Promise<boolean> {
  return (await lastBefore(db, event, ['UserDeactivated', 'UserReactivated']))?.type !== 'UserDeactivated';
}

function membership(realmId: number, changes: Array<{ op: 'add_members' | 'remove_members'; group: number | undefined; user: number }>): PreparedEvent | null {
  const events: ClientEvent[] = changes
    .filter((c) => c.group !== undefined)
    .map((c) => ({ type: 'user_group', op: c.op, group_id: c.group, user_ids: [c.user] }));
  if (events.length === 0) return null;
  return { audience: 'realm', forUser: (r) => (r.realm.id === realmId ? events : []) };
}

registerTranslator('UserCreated', async (e, db) => {
  const d = e.data as DataOf<'UserCreated'>;
  if (d.is_system_bot) return null;
  return membership(d.realm_id, [{ op: 'add_members', group: await systemGroupId(db, d.realm_id, d.role), user: d.user_id }]);
});

registerTranslator('UserRoleChanged', async (e, db) => {
  const d = e.data as DataOf<'UserRoleChanged'>;
  const realmId = e.metadata.realm_id;
  const from = await systemGroupId(db, realmId, d.old_role);
  const to = await systemGroupId(db, realmId, d.role);
  if (from === to) return null;
  return membership(realmId, [
    { op: 'remove_members', group: from, user: d.user_id },
    { op: 'add_members', group: to, user: d.user_id },
  ]);
});

registerTranslator('UserDeactivated', async (e, db) => {
  const d = e.data as DataOf<'UserDeactivated'>;
  const role = await roleBefore(db, e);
  if (role === undefined) return null;
  return membership(e.metadata.realm_id, [{ op: 'remove_members', group: await systemGroupId(db, e.metadata.realm_id, role), user: d.user_id }]);
});

// Erasing an active account deactivates it: it leaves its role's group, as a deactivation does.
registerTranslator('UserErased', async (e, db) => {
  const d = e.data as DataOf<'UserErased'>;
  const role = await roleBefore(db, e);
  if (role === undefined || !(await activeBefore(db, e))) return null;
  return membership(d.realm_id, [{ op: 'remove_members', group: await systemGroupId(db, d.realm_id, role), user: d.user_id }]);
});

registerTranslator('UserReactivated', async (e, db) => {
  const d = e.data as DataOf<'UserReactivated'>;
  const role = await roleBefore(db, e);
  if (role === undefined) return null;
  return membership(e.metadata.realm_id, [{ op: 'add_members', group: await systemGroupId(db, e.metadata.realm_id, role), user: d.user_id }]);
});
