import t from 'tap';
import { decideUserGroups, type GroupState } from '../../../src/domain/user-groups/decider.js';

const groups: GroupState[] = [
  { id: 1, name: 'role:members', is_system_group: true, members: [10], direct_subgroup_ids: [] },
  { id: 2, name: 'a', is_system_group: false, members: [10], direct_subgroup_ids: [3] },
  { id: 3, name: 'b', is_system_group: false, members: [], direct_subgroup_ids: [4] },
  { id: 4, name: 'c', is_system_group: false, members: [11], direct_subgroup_ids: [] },
];
const state = { realm_id: 1, groups, active_user_ids: new Set([10, 11, 12, 13]), edit_policy: 1 };
const admin = { user_id: 12, role: 200, is_full_member: true };
const moderator = { user_id: 13, role: 300, is_full_member: true };
const member = (user_id: number, is_full_member = true) => ({ user_id, role: 400, is_full_member });

t.test('subgroup cycles are refused at any depth', async (t) => {
  t.throws(() => decideUserGroups({ type: 'UpdateSubgroups', actor: admin, group_id: 4, add: [2], delete: [] }, state), {
    message: 'User group 4 is already a subgroup of one of the passed subgroups.',
  });
  t.same(decideUserGroups({ type: 'UpdateSubgroups', actor: admin, group_id: 2, add: [4], delete: [3] }, state).map((e) => e.type),
    ['UserGroupSubgroupsAdded', 'UserGroupSubgroupsRemoved']);
});

t.test('who may edit', async (t) => {
  t.throws(() => decideUserGroups({ type: 'UpdateMembers', actor: admin, group_id: 1, add: [11], delete: [] }, state), { message: 'Insufficient permission' });
  // Direct members may edit; 11 is in group 4, hence (through subgroups) in 2, which is not enough.
  t.same(decideUserGroups({ type: 'UpdateUserGroup', actor: member(10), group_id: 2, description: 'x' }, state), [
    { type: 'UserGroupUpdated', data: { realm_id: 1, group_id: 2, changes: { description: 'x' } } },
  ]);
  t.throws(() => decideUserGroups({ type: 'UpdateUserGroup', actor: member(11), group_id: 2, description: 'x' }, state), { message: 'Insufficient permission' });
  t.equal(decideUserGroups({ type: 'UpdateUserGroup', actor: moderator, group_id: 4, description: 'x' }, state).length, 1, 'moderators edit any group');
  t.throws(() => decideUserGroups({ type: 'UpdateUserGroup', actor: member(12), group_id: 4, description: 'x' }, state), { message: 'Insufficient permission' });
  t.same(decideUserGroups({ type: 'UpdateUserGroup', actor: admin, group_id: 2, name: 'a' }, state), [], 'no change, no event');
});

t.test('deleting a subgroup detaches it from its parents first', async (t) => {
  t.same(decideUserGroups({ type: 'DeleteUserGroup', actor: admin, group_id: 3 }, state), [
    { type: 'UserGroupSubgroupsRemoved', data: { realm_id: 1, group_id: 2, subgroup_ids: [3] } },
    { type: 'UserGroupDeleted', data: { realm_id: 1, group_id: 3 } },
  ]);
});

t.test('the organization policy gates every change', async (t) => {
  const create = (actor: typeof admin) => decideUserGroups({ type: 'CreateUserGroup', actor, group_id: 9, name: 'n', description: '', members: [], subgroups: [], now: 0 }, { ...state, edit_policy: 4 });
  t.throws(() => create(member(10)), { message: 'Insufficient permission' }, 'moderators only');
  t.equal(create(moderator).length, 1);
  t.throws(() => decideUserGroups({ type: 'UpdateUserGroup', actor: member(10, false), group_id: 2, description: 'y' }, { ...state, edit_policy: 3 }), {
    message: 'Insufficient permission',
  }, 'full members only');
});
