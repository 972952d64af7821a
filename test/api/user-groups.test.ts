import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

const SYSTEM = ['role:owners', 'role:administrators', 'role:moderators', 'role:fullmembers', 'role:members', 'role:everyone', 'role:internet', 'role:nobody'];

t.test('user groups: system groups, create, update, members, subgroups, delete', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const guest = await s.user(Role.GUEST, 'Guest');

  const initial = await s.api('GET', '/user_groups', alice);
  t.equal(initial.status, 200);
  t.same(initial.body.user_groups.map((g: any) => g.name), SYSTEM, 'system groups exist from the start');
  t.ok(initial.body.user_groups.every((g: any) => g.is_system_group));
  const sys = Object.fromEntries(initial.body.user_groups.map((g: any) => [g.name, g]));
  t.same(sys['role:administrators'].members, [admin.id]);
  t.same(sys['role:administrators'].direct_subgroup_ids, [sys['role:owners'].id]);

  const created = await s.api('POST', '/user_groups/create', alice, { name: 'backend', description: 'Backend team', members: [alice.id, bob.id] });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const backend = created.body.group_id;
  t.type(backend, 'number');
  const front = (await s.api('POST', '/user_groups/create', admin, { name: 'frontend', description: '', members: [carol.id] })).body.group_id;

  let groups = (await s.api('GET', '/user_groups', alice)).body.user_groups;
  t.match(groups.find((g: any) => g.id === backend), {
    name: 'backend', description: 'Backend team', members: [alice.id, bob.id], direct_subgroup_ids: [], is_system_group: false,
    can_mention_group: sys['role:everyone'].id,
  });
  // creator_id, date_created and deactivated join group objects at feature levels 290-292, above ours.
  t.notOk(['creator_id', 'date_created', 'deactivated'].some((k) => k in groups.find((g: any) => g.id === backend)));

  // Validation of creation.
  t.equal((await s.api('POST', '/user_groups/create', alice, { name: 'backend', description: '', members: [] })).body.msg, "User group 'backend' already exists.");
  t.equal((await s.api('POST', '/user_groups/create', alice, { name: 'role:x', description: '', members: [] })).body.msg, "User group name cannot start with 'role:'.");
  t.equal((await s.api('POST', '/user_groups/create', alice, { name: ' ', description: '', members: [] })).body.msg, "User group name can't be empty!");
  t.equal((await s.api('POST', '/user_groups/create', alice, { name: 'x', description: '', members: [999999] })).body.msg, 'Invalid user ID: 999999');
  t.equal((await s.api('POST', '/user_groups/create', guest, { name: 'g', description: '', members: [] })).body.msg, 'Not allowed for guest users');
  t.equal((await s.api('POST', '/user_groups/create', alice, { name: 'x' })).body.code, 'REQUEST_VARIABLE_MISSING');

  // Update.
  t.equal((await s.api('PATCH', `/user_groups/${backend}`, bob, { name: 'server', description: 'Server team' })).status, 200);
  groups = (await s.api('GET', '/user_groups', alice)).body.user_groups;
  t.match(groups.find((g: any) => g.id === backend), { name: 'server', description: 'Server team' });
  t.equal((await s.api('PATCH', `/user_groups/${backend}`, carol, { name: 'mine' })).body.msg, 'Insufficient permission', 'non-members may not edit');
  t.equal((await s.api('PATCH', '/user_groups/99999', admin, { name: 'x' })).body.msg, 'Invalid user group');

  // Members.
  t.equal((await s.api('POST', `/user_groups/${backend}/members`, admin, { add: [carol.id], delete: [bob.id] })).status, 200);
  t.same((await s.api('GET', `/user_groups/${backend}/members`, alice, { direct_member_only: true })).body.members, [alice.id, carol.id]);
  t.equal((await s.api('POST', `/user_groups/${backend}/members`, admin, { add: [carol.id] })).body.msg, `User ${carol.id} is already a member of this group`);
  t.equal((await s.api('POST', `/user_groups/${backend}/members`, admin, { delete: [bob.id] })).body.msg, `There is no member '${bob.id}' in this user group`);
  t.equal((await s.api('POST', `/user_groups/${backend}/members`, admin, { add: [888888] })).body.msg, 'Invalid user ID: 888888');

  // Subgroups and membership through them.
  t.equal((await s.api('POST', `/user_groups/${front}/subgroups`, admin, { add: [backend] })).status, 200);
  t.same((await s.api('GET', `/user_groups/${front}/subgroups`, alice)).body.subgroups, [backend]);
  t.equal((await s.api('GET', `/user_groups/${front}/members/${alice.id}`, bob)).body.is_user_group_member, true, 'member through a subgroup');
  t.equal((await s.api('GET', `/user_groups/${front}/members/${alice.id}`, bob, { direct_member_only: true })).body.is_user_group_member, false);
  t.equal((await s.api('GET', `/user_groups/${front}/members/${bob.id}`, bob)).body.is_user_group_member, false);
  t.same((await s.api('GET', `/user_groups/${front}/members`, alice)).body.members, [alice.id, carol.id]);
  t.equal((await s.api('GET', `/user_groups/${sys['role:members'].id}/members/${admin.id}`, alice)).body.is_user_group_member, true, 'system groups nest by role');
  t.equal((await s.api('GET', `/user_groups/${sys['role:members'].id}/members/${guest.id}`, alice)).body.is_user_group_member, false);
  t.equal((await s.api('GET', `/user_groups/${front}/members/777777`, alice)).body.msg, 'No such user');
  t.equal((await s.api('GET', '/user_groups/777777/members', alice)).body.msg, 'Invalid user group');

  const cycle = await s.api('POST', `/user_groups/${backend}/subgroups`, admin, { add: [front] });
  t.equal(cycle.status, 400);
  t.equal(cycle.body.msg, `User group ${backend} is already a subgroup of one of the passed subgroups.`);
  t.equal((await s.api('POST', `/user_groups/${backend}/subgroups`, admin, { add: [backend] })).body.msg,
    `User group ${backend} is already a subgroup of one of the passed subgroups.`, 'a group cannot contain itself');
  t.equal((await s.api('POST', `/user_groups/${front}/subgroups`, admin, { add: [666666] })).body.msg, 'Invalid user group ID: 666666');
  t.equal((await s.api('POST', `/user_groups/${front}/subgroups`, admin, { add: [backend] })).body.msg, `User group ${backend} is already a subgroup of this group.`);
  t.equal((await s.api('POST', `/user_groups/${front}/subgroups`, admin, { delete: [sys['role:members'].id] })).body.msg, `User group ${sys['role:members'].id} is not a subgroup of this group.`);
  t.equal((await s.api('POST', `/user_groups/${front}/subgroups`, admin, {})).status, 400);

  // System groups follow roles: nobody changes them through this API.
  for (const as of [alice, admin]) {
    const r = await s.api('POST', `/user_groups/${sys['role:moderators'].id}/members`, as, { add: [bob.id] });
    t.equal(r.status, 400);
    t.equal(r.body.msg, 'Insufficient permission');
  }
  t.equal((await s.api('POST', `/user_groups/${sys['role:members'].id}/subgroups`, alice, { add: [backend] })).body.msg, 'Insufficient permission');
  t.equal((await s.api('DELETE', `/user_groups/${sys['role:nobody'].id}`, admin)).body.msg, 'Insufficient permission');

  // Delete: the group leaves its parents too.
  t.equal((await s.api('DELETE', `/user_groups/${backend}`, carol)).status, 200);
  groups = (await s.api('GET', '/user_groups', alice)).body.user_groups;
  t.notOk(groups.some((g: any) => g.id === backend));
  t.same(groups.find((g: any) => g.id === front).direct_subgroup_ids, []);
  t.equal((await s.api('DELETE', `/user_groups/${backend}`, admin)).body.msg, 'Invalid user group');
  t.equal((await s.api('GET', '/user_groups', null)).status, 401);
});
