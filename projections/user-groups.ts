import type { Trx } from '../src/projections-api.js';
import { ALL_ROLES, systemGroupForRole } from '../src/domain/roles.js';
import { defineProjection } from './define.js';

/** The groups a role alone makes one a direct member of (role:fullmembers also takes the account's age: its own events). */
const ROLE_GROUPS = [...new Set(ALL_ROLES.map(systemGroupForRole))];

/** Direct membership of the system group matching a role; wider groups include it as a subgroup. */
async function setSystemGroup(trx: Trx, userId: number, role: number | null): Promise<void> {
  const roleGroupIds = trx.selectFrom('user_groups').select('id').where('is_system_group', '=', true).where('name', 'in', ROLE_GROUPS);
  await trx.deleteFrom('user_group_members').where('user_id', '=', userId).where('group_id', 'in', roleGroupIds).execute();
  if (role === null) return;
  const realm = await trx.selectFrom('users').select('realm_id').where('id', '=', userId).executeTakeFirst();
  const group = await trx
    .selectFrom('user_groups')
    .select('id')
    .where('is_system_group', '=', true)
    .where('name', '=', systemGroupForRole(role))
    .$if(!!realm, (q) => q.where('realm_id', '=', realm!.realm_id))
    .executeTakeFirst();
  if (group) await trx.insertInto('user_group_members').values({ group_id: group.id, user_id: userId }).execute();
}

export const userGroupsProjection = defineProjection({
  name: 'user_groups',
  version: 5,
  tables: ['user_groups', 'user_group_members', 'user_group_subgroups'],
  handlers: {
    UserGroupCreated: async (trx, d) => {
      await trx
        .insertInto('user_groups')
        .values({
          id: d.group_id,
          realm_id: d.realm_id,
          name: d.name,
          description: d.description,
          is_system_group: d.is_system_group,
          deactivated: false,
          creator_id: d.creator_id,
          date_created: d.date_created,
          can_mention_group: d.can_mention_group ?? null,
        })
        .execute();
      if (d.members.length > 0) {
        await trx.insertInto('user_group_members').values(d.members.map((user_id) => ({ group_id: d.group_id, user_id }))).execute();
      }
      if (d.subgroups.length > 0) {
        await trx
          .insertInto('user_group_subgroups')
          .values(d.subgroups.map((subgroup_id) => ({ group_id: d.group_id, subgroup_id })))
          .execute();
      }
    },
    UserGroupUpdated: async (trx, d) => {
      if (Object.keys(d.changes).length === 0) return;
      await trx.updateTable('user_groups').set(d.changes).where('id', '=', d.group_id).execute();
    },
    UserGroupMembersAdded: async (trx, d) => {
      await trx
        .insertInto('user_group_members')
        .values(d.user_ids.map((user_id) => ({ group_id: d.group_id, user_id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
    UserGroupMembersRemoved: async (trx, d) => {
      await trx.deleteFrom('user_group_members').where('group_id', '=', d.group_id).where('user_id', 'in', d.user_ids).execute();
    },
    UserGroupSubgroupsAdded: async (trx, d) => {
      await trx
        .insertInto('user_group_subgroups')
        .values(d.subgroup_ids.map((subgroup_id) => ({ group_id: d.group_id, subgroup_id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
    UserGroupSubgroupsRemoved: async (trx, d) => {
      await trx.deleteFrom('user_group_subgroups').where('group_id', '=', d.group_id).where('subgroup_id', 'in', d.subgroup_ids).execute();
    },
    UserGroupDeleted: async (trx, d) => {
      await trx.deleteFrom('user_group_members').where('group_id', '=', d.group_id).execute();
      await trx.deleteFrom('user_group_subgroups').where((eb) => eb.or([eb('group_id', '=', d.group_id), eb('subgroup_id', '=', d.group_id)])).execute();
      await trx.deleteFrom('user_groups').where('id', '=', d.group_id).execute();
    },
    // users projection runs first (it is listed before this one), so the user row exists.
    // The system bots belong to no group of the organization, as on the real server.
    UserCreated: async (trx, d) => {
      if (!d.is_system_bot) await setSystemGroup(trx, d.user_id, d.role);
    },
    UserRoleChanged: (trx, d) => setSystemGroup(trx, d.user_id, d.role),
    UserDeactivated: (trx, d) => setSystemGroup(trx, d.user_id, null),
    // An erased account is deactivated (5: it left its role's group as a deactivation does).
    UserErased: (trx, d) => setSystemGroup(trx, d.user_id, null),
    UserReactivated: async (trx, d) => {
      const user = await trx.selectFrom('users').select('role').where('id', '=', d.user_id).executeTakeFirstOrThrow();
      await setSystemGroup(trx, d.user_id, user.role);
    },
  },
});
