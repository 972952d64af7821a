import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('user_group events keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: ['user_group'], fetch_event_types: ['realm_user_groups'] };

  let a = 0;
  const added = await verifyAction(t, s, bob, async () => {
    a = (await s.api('POST', '/user_groups/create', alice, { name: 'A', description: 'first', members: [alice.id] })).body.group_id;
  }, { register });
  t.match(added, [{ type: 'user_group', op: 'add', group: { id: a, name: 'A', members: [alice.id], is_system_group: false } }]);
  let b = 0;
  await verifyAction(t, s, bob, async () => {
    b = (await s.api('POST', '/user_groups/create', admin, { name: 'B', description: '', members: [], subgroups: [a] })).body.group_id;
  }, { register });

  const updated = await verifyAction(t, s, bob, () => s.api('PATCH', `/user_groups/${a}`, alice, { name: 'A2', description: 'renamed' }), { register });
  t.match(updated, [{ type: 'user_group', op: 'update', group_id: a, data: { name: 'A2', description: 'renamed' } }]);

  const members = await verifyAction(t, s, bob, () => s.api('POST', `/user_groups/${a}/members`, admin, { add: [bob.id], delete: [alice.id] }), { register });
  t.match(members, [
    { type: 'user_group', op: 'add_members', group_id: a, user_ids: [bob.id] },
    { type: 'user_group', op: 'remove_members', group_id: a, user_ids: [alice.id] },
  ]);

  let c = 0;
  await verifyAction(t, s, bob, async () => {
    c = (await s.api('POST', '/user_groups/create', admin, { name: 'C', description: '', members: [] })).body.group_id;
  }, { register });
  const subs = await verifyAction(t, s, bob, () => s.api('POST', `/user_groups/${b}/subgroups`, admin, { add: [c], delete: [a] }), { register });
  t.match(subs, [
    { type: 'user_group', op: 'add_subgroups', group_id: b, direct_subgroup_ids: [c] },
    { type: 'user_group', op: 'remove_subgroups', group_id: b, direct_subgroup_ids: [a] },
  ]);

  const removed = await verifyAction(t, s, bob, () => s.api('DELETE', `/user_groups/${c}`, admin), { register });
  t.match(removed, [
    { type: 'user_group', op: 'remove_subgroups', group_id: b, direct_subgroup_ids: [c] },
    { type: 'user_group', op: 'remove', group_id: c },
  ]);
});

t.test('system group membership events follow roles', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const register = { event_types: ['user_group'], fetch_event_types: ['realm_user_groups'] };
  const groups = (await s.api('GET', '/user_groups', admin)).body.user_groups;
  const id = (name: string) => groups.find((g: any) => g.name === name).id;

  const promoted = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${member.id}`, s.owner, { role: Role.MODERATOR }), { register });
  t.match(promoted, [
    { type: 'user_group', op: 'remove_members', group_id: id('role:members'), user_ids: [member.id] },
    { type: 'user_group', op: 'add_members', group_id: id('role:moderators'), user_ids: [member.id] },
  ]);
  // As send_events_for_user_deactivation: whoever may know the user gets realm_user update is_active
  // false alone, which takes them out of every group; no user_group event (test_do_deactivate_user).
  const withUsers = { event_types: ['user_group', 'realm_user'], fetch_event_types: ['realm_user_groups', 'realm_user'] };
  const gone = await verifyAction(t, s, admin, () => s.api('DELETE', `/users/${member.id}`, admin), { register: withUsers });
  t.same(gone.map((e) => ({ ...e, id: 0 })), [{ type: 'realm_user', op: 'update', person: { user_id: member.id, is_active: false }, id: 0 }]);
  await verifyAction(t, s, admin, () => s.api('POST', `/users/${member.id}/reactivate`, admin), {
    register,
    expect: (events) => t.match(events, [{ op: 'add_members', group_id: id('role:moderators'), user_ids: [member.id] }]),
  });
  await verifyAction(t, s, admin, () => s.api('POST', '/users', s.owner, { email: 'new@example.com', full_name: 'New' }), {
    register,
    expect: (events) => t.match(events, [{ op: 'add_members', group_id: id('role:members') }]),
  });
});
