import t from 'tap';
import { decideUserGroups, type GroupState } from '../../../src/domain/user-groups/decider.js';

const groups: GroupState[] = [
  { id: 1, name: 'role:members', is_system_group: true, members: [10], direct_subgroup_ids: [] },
  { id: 2, name: 'a', is_system_group: false, members: [10], direct_subgroup_ids: [3] },
  { id: 3, name: 'b', is_system_group: false, members: [], direct_subgroup_ids: [4] },
  { id: 4, name: 'c', is_system_group: false, members: [11], direct_subgroup_ids: [] },
];
const state = { realm_id: 1, groups, active_user_ids: new Set([10, 11, 12]) };
const admin = { user_id: 12, role: 200 };
const member = (user_id: number) => ({ user_id, role: 400 });

t.test('subgroup cycles are refused at any depth', async (t) => {
  t.throws(() => decideUserGroups({ type: 'UpdateSubgroups', actor: admin, group_id: 4, add: [2], delete: [] }, state), { message: /cycle/ });
  t.same(decideUserGroups({ type: 'UpdateSubgroups', actor: admin, group_id: 2, add: [4], delete: [3] }, state).map((e) => e.type),
    ['UserGroupSubgroupsAdded', 'UserGroupSubgroupsRemoved']);
});

t.test('who may edit', async (t) => {
  t.throws(() => decideUserGroups({ type: 'UpdateMembers', actor: admin, group_id: 1, add: [11], delete: [] }, state), { message: 'Insufficient permission' });
  // 11 is in group 4, hence (through subgroups) in 2.
  t.same(decideUserGroups({ type: 'UpdateUserGroup', actor: member(11), group_id: 2, description: 'x' }, state), [
    { type: 'UserGroupUpdated', data: { realm_id: 1, group_id: 2, changes: { description: 'x' } } },
  ]);
  t.throws(() => decideUserGroups({ type: 'UpdateUserGroup', actor: member(12), group_id: 4, description: 'x' }, state), { message: 'Insufficient permission' });
  t.same(decideUserGroups({ type: 'UpdateUserGroup', actor: admin, group_id: 2, name: 'a' }, state), [], 'no change, no event');
});

t.test('deleting a subgroup detaches it from its parents first', async (t) => {
  t.same(decideUserGroups({ type: 'DeleteUserGroup', actor: admin, group_id: 3 }, state), [
    { type: 'UserGroupSubgroupsRemoved', data: { realm_id: 1, group_id: 2, subgroup_ids: [3] } },
    { type: 'UserGroupDeleted', data: { realm_id: 1, group_id: 3 } },
  ]);
});
