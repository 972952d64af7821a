// User groups by the real server's rules of feature level 247 (found by replaying its test_user_groups.py
// against this server): who may use the endpoints, who may change a group, names as typed, the
// can_mention_group setting and what it means for messages.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/channels-fixture.js';

async function systemGroups(s: TestServer, as: TestUser): Promise<Record<string, number>> {
  const groups = (await s.api('GET', '/user_groups', as)).body.user_groups as Array<{ id: number; name: string }>;
  return Object.fromEntries(groups.map((g) => [g.name, g.id]));
}

async function create(s: TestServer, as: TestUser, params: Record<string, unknown>): Promise<number> {
  const r = await s.api('POST', '/user_groups/create', as, { description: '', ...params });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.group_id;
}

t.test('guests and bots may use no user-group endpoint, reads included', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const guest = await s.user(Role.GUEST, 'Guest');
  const bot = await s.user(Role.MEMBER, 'Hamlet Bot', { bot_type: 1, bot_owner_id: hamlet.id });
  const group = await create(s, hamlet, { name: 'support', members: [hamlet.id] });
  const calls: Array<[string, string, Record<string, unknown>]> = [
    ['GET', '/user_groups', {}],
    ['POST', '/user_groups/create', { name: 'x', description: '' }],
    ['PATCH', `/user_groups/${group}`, { description: 'x' }],
    ['DELETE', `/user_groups/${group}`, {}],
    ['POST', `/user_groups/${group}/members`, { add: [hamlet.id] }],
    ['POST', `/user_groups/${group}/subgroups`, { add: [group] }],
    ['GET', `/user_groups/${group}/members`, {}],
    ['GET', `/user_groups/${group}/subgroups`, {}],
    ['GET', `/user_groups/${group}/members/${hamlet.id}`, {}],
  ];
  for (const [method, path, params] of calls) {
    t.match(await s.api(method, path, guest, params), { status: 400, body: { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' } }, `${method} ${path} by a guest`);
    t.match(await s.api(method, path, bot, params), { status: 400, body: { msg: 'This endpoint does not accept bot requests.' } }, `${method} ${path} by a bot`);
  }
});

t.test('creation: members may be left out, names are kept as typed and checked as such', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const id = await create(s, hamlet, { name: ' support team ' });
  const group = (await s.api('GET', '/user_groups', hamlet)).body.user_groups.find((g: any) => g.id === id);
  t.match(group, { name: ' support team ', members: [], direct_subgroup_ids: [] }, 'no members; the name is not trimmed');
  const error = async (params: Record<string, unknown>) => (await s.api('POST', '/user_groups/create', hamlet, { description: '', ...params })).body.msg;
  t.equal(await error({ name: '' }), "User group name can't be empty!");
  t.equal(await error({ name: '   ' }), "User group name can't be empty!");
  t.equal(await error({ name: 'a'.repeat(101) }), 'User group name cannot exceed 100 characters.');
  t.equal(await error({ name: ' '.repeat(50) + 'a'.repeat(51) }), 'User group name cannot exceed 100 characters.', 'spaces count');
  for (const prefix of ['@', 'role:', 'user:', 'stream:', 'channel:']) {
    t.equal(await error({ name: `${prefix}x` }), `User group name cannot start with '${prefix}'.`);
  }
  t.equal(await error({ name: ' support team ' }), "User group ' support team ' already exists.");
  t.equal(await error({ name: 'x', members: [hamlet.id, 4444] }), 'Invalid user ID: 4444');
  t.equal(await error({ name: 'a'.repeat(101), members: [4444] }), 'Invalid user ID: 4444', 'members are checked before the name');
  t.equal((await s.api('POST', '/user_groups/create', hamlet, { name: 'x' })).body.var_name, 'description');
});

t.test('who may change a group: the organization policy, then moderators, administrators and direct members', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const moderator = await s.user(Role.MODERATOR, 'Shiva');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const inner = await create(s, hamlet, { name: 'inner', members: [hamlet.id] });
  const outer = await create(s, othello, { name: 'outer', members: [othello.id], subgroups: [inner] });

  t.equal((await s.api('PATCH', `/user_groups/${outer}`, moderator, { description: 'by a moderator' })).status, 200, 'moderators need not be members');
  t.equal((await s.api('PATCH', `/user_groups/${outer}`, admin, { description: 'by an administrator' })).status, 200);
  t.equal((await s.api('PATCH', `/user_groups/${outer}`, othello, { description: 'by a direct member' })).status, 200);
  const refused = { status: 400, body: { code: 'BAD_REQUEST', msg: 'Insufficient permission' } };
  t.match(await s.api('PATCH', `/user_groups/${outer}`, hamlet, { description: 'x' }), refused, 'a member through a subgroup is not enough');
  t.match(await s.api('POST', `/user_groups/${outer}/members`, cordelia, { add: [cordelia.id] }), refused, 'nor is being nobody');
  t.match(await s.api('DELETE', `/user_groups/${outer}`, hamlet), refused);

  // user_group_edit_policy: 2 administrators, 4 moderators, 3 full members, 1 members.
  t.equal((await s.api('PATCH', '/realm', admin, { user_group_edit_policy: 2 })).status, 200);
  t.match(await s.api('POST', '/user_groups/create', moderator, { name: 'm', description: '' }), refused, 'administrators only: no moderator creates');
  t.match(await s.api('POST', `/user_groups/${outer}/members`, othello, { add: [cordelia.id] }), refused, 'nor does a member change their group');
  t.match(await s.api('POST', '/user_groups/9999/members', othello, { add: [cordelia.id] }), refused, 'the policy is checked before the group');
  t.equal((await s.api('POST', `/user_groups/${outer}/members`, admin, { add: [cordelia.id] })).status, 200);

  t.equal((await s.api('PATCH', '/realm', admin, { user_group_edit_policy: 4 })).status, 200);
  t.equal((await s.api('POST', '/user_groups/create', moderator, { name: 'm', description: '' })).status, 200, 'moderators only');
  t.match(await s.api('PATCH', `/user_groups/${outer}`, othello, { description: 'y' }), refused);

  t.equal((await s.api('PATCH', '/realm', s.owner, { user_group_edit_policy: 3, waiting_period_threshold: 10 })).status, 200);
  t.match(await s.api('PATCH', `/user_groups/${outer}`, othello, { description: 'y' }), refused, 'a new account is not a full member');
  t.equal((await s.api('PATCH', `/user_groups/${outer}`, moderator, { description: 'y' })).status, 200);

  t.equal((await s.api('PATCH', '/realm', admin, { user_group_edit_policy: 1 })).status, 200);
  t.equal((await s.api('PATCH', `/user_groups/${outer}`, othello, { description: 'z' })).status, 200);
});

t.test('updates: nothing to change is an error before the group is looked up; unchanged values are no change', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const id = await create(s, hamlet, { name: 'support', description: 'Support', members: [hamlet.id] });
  const other = await create(s, hamlet, { name: 'marketing', members: [hamlet.id] });
  t.equal((await s.api('PATCH', '/user_groups/9999', hamlet, {})).body.msg, 'No new data supplied');
  t.equal((await s.api('PATCH', '/user_groups/9999', hamlet, { name: 'x' })).body.msg, 'Invalid user group');
  t.equal((await s.api('PATCH', `/user_groups/${id}`, hamlet, { name: 'marketing' })).body.msg, "User group 'marketing' already exists.");
  t.equal((await s.api('PATCH', `/user_groups/${id}`, hamlet, { name: '' })).body.msg, "User group name can't be empty!");
  t.equal((await s.api('PATCH', `/user_groups/${other}`, hamlet, { name: 'Marketing' })).status, 200, 'names differ by case');
  const events = await verifyAction(t, s, bob, () => s.api('PATCH', `/user_groups/${id}`, hamlet, { name: 'support', description: 'Support' }), {
    register: { event_types: ['user_group'], fetch_event_types: ['realm_user_groups'] },
  });
  t.same(events, [], 'the same name and description send nothing');
});

t.test('members and subgroups: additions before removals, the error order of the real server', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const a = await create(s, admin, { name: 'a', members: [hamlet.id] });
  const b = await create(s, admin, { name: 'b', members: [] });
  const c = await create(s, admin, { name: 'c', members: [], subgroups: [a] });

  t.equal((await s.api('POST', `/user_groups/${a}/members`, admin, { add: [othello.id], delete: [othello.id] })).status, 200, 'added, then removed');
  t.same((await s.api('GET', `/user_groups/${a}/members`, admin, { direct_member_only: true })).body.members, [hamlet.id]);
  t.equal((await s.api('POST', '/user_groups/9999/members', admin, { delete: [8888] })).body.msg, 'Invalid user ID: 8888', 'removals check users first');
  t.equal((await s.api('POST', '/user_groups/9999/members', admin, { add: [8888] })).body.msg, 'Invalid user group', 'additions check the group first');

  t.equal((await s.api('POST', `/user_groups/${a}/subgroups`, admin, { add: [c] })).body.msg,
    `User group ${a} is already a subgroup of one of the passed subgroups.`, 'a cycle');
  t.equal((await s.api('POST', `/user_groups/${b}/subgroups`, admin, { add: [b] })).body.msg,
    `User group ${b} is already a subgroup of one of the passed subgroups.`, 'itself');
  t.equal((await s.api('POST', `/user_groups/${b}/subgroups`, admin, { add: [a], delete: [a] })).status, 200, 'added, then removed');
  t.same((await s.api('GET', `/user_groups/${b}/subgroups`, admin)).body.subgroups, []);
});

t.test('membership of one user: bots are no users here, deactivated users are refused', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const gone = await s.user(Role.MEMBER, 'Gone');
  const bot = await s.user(Role.MEMBER, 'Hamlet Bot', { bot_type: 1, bot_owner_id: hamlet.id });
  const id = await create(s, admin, { name: 'a', members: [hamlet.id, bot.id, gone.id] });
  t.equal((await s.api('DELETE', `/users/${gone.id}`, admin)).status, 200);
  t.equal((await s.api('GET', `/user_groups/${id}/members/${hamlet.id}`, admin)).body.is_user_group_member, true);
  t.equal((await s.api('GET', `/user_groups/${id}/members/${bot.id}`, admin)).body.msg, 'No such user');
  t.equal((await s.api('GET', `/user_groups/${id}/members/${gone.id}`, admin)).body.msg, 'User is deactivated');
  t.equal((await s.api('GET', `/user_groups/9999/members/${gone.id}`, admin)).body.msg, 'Invalid user group', 'the group first');
});

t.test('can_mention_group: set on creation and update, reported everywhere, and enforced on messages', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const moderator = await s.user(Role.MODERATOR, 'Shiva');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const sys = await systemGroups(s, hamlet);
  const register = { event_types: ['user_group'], fetch_event_types: ['realm_user_groups'] };

  let leadership = 0;
  const added = await verifyAction(t, s, cordelia, async () => {
    leadership = await create(s, hamlet, { name: 'leadership', members: [hamlet.id], can_mention_group: sys['role:moderators'] });
  }, { register });
  t.match(added, [{ type: 'user_group', op: 'add', group: { id: leadership, can_mention_group: sys['role:moderators'] } }]);
  const plain = await create(s, hamlet, { name: 'plain', members: [cordelia.id] });
  const groups = (await s.api('GET', '/user_groups', hamlet)).body.user_groups;
  t.equal(groups.find((g: any) => g.id === plain).can_mention_group, sys['role:everyone'], 'by default everyone may mention a group');
  t.equal(groups.find((g: any) => g.id === sys['role:members']).can_mention_group, sys['role:nobody'], 'and nobody a system group');

  const error = async (params: Record<string, unknown>) => (await s.api('PATCH', `/user_groups/${plain}`, admin, params)).body.msg;
  t.equal(await error({ can_mention_group: sys['role:internet'] }), "'can_mention_group' setting cannot be set to 'role:internet' group.");
  t.equal(await error({ can_mention_group: sys['role:owners'] }), "'can_mention_group' setting cannot be set to 'role:owners' group.");
  t.equal(await error({ can_mention_group: 9999 }), 'Invalid user group');
  t.equal((await s.api('POST', '/user_groups/create', hamlet, { name: 'x', description: '', can_mention_group: sys['role:owners'] })).body.msg,
    "'can_mention_group' setting cannot be set to 'role:owners' group.");

  const updated = await verifyAction(t, s, cordelia, () => s.api('PATCH', `/user_groups/${plain}`, cordelia, { can_mention_group: leadership }), { register });
  t.same(updated.map((e: any) => ({ op: e.op, group_id: e.group_id, data: e.data })), [{ op: 'update', group_id: plain, data: { can_mention_group: leadership } }]);

  // Mentioning: only members (at any depth) of the setting's group; a silent mention is no mention.
  await createChannel(s, admin, 'general-talk', [moderator, hamlet, cordelia]);
  const send = (as: TestUser, content: string) => s.api('POST', '/messages', as, { type: 'stream', to: 'general-talk', topic: 't', content });
  t.equal((await send(cordelia, 'hi @*leadership*')).body.msg,
    "You are not allowed to mention user group 'leadership'. You must be a member of 'role:moderators' to mention this group.");
  t.equal((await send(cordelia, 'hi @_*leadership*')).status, 200, 'a silent mention');
  t.equal((await send(admin, 'hi @*leadership*')).status, 200, 'administrators are in role:moderators through subgroups');
  t.equal((await send(moderator, 'hi @*leadership*')).status, 200);
  t.equal((await send(cordelia, 'hi @*plain*')).body.msg,
    "You are not allowed to mention user group 'plain'. You must be a member of 'leadership' to mention this group.");
  t.equal((await send(hamlet, 'hi @*plain*')).status, 200);
  t.equal((await send(admin, 'all @*role:members*')).body.msg,
    "You are not allowed to mention user group 'role:members'. You must be a member of 'role:nobody' to mention this group.");
  const own = (await send(cordelia, 'draft')).body.id;
  t.equal((await s.api('PATCH', `/messages/${own}`, cordelia, { content: 'edited @*leadership*' })).body.msg,
    "You are not allowed to mention user group 'leadership'. You must be a member of 'role:moderators' to mention this group.", 'edits too');

  // A group that another group's setting names stays until that setting moves on.
  t.equal((await s.api('DELETE', `/user_groups/${leadership}`, admin)).body.msg, 'Cannot delete user group in use.');
  t.equal((await s.api('PATCH', `/user_groups/${plain}`, admin, { can_mention_group: sys['role:everyone'] })).status, 200);
  t.equal((await s.api('DELETE', `/user_groups/${leadership}`, admin)).status, 200);
});

t.test('Notification Bot tells users they were added to or removed from a group', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const bot = await s.user(Role.MEMBER, 'Hamlet Bot', { bot_type: 1, bot_owner_id: hamlet.id });
  const id = await create(s, admin, { name: 'support', members: [admin.id, othello.id] });
  const latest = async (as: TestUser) => {
    const r = await s.api('GET', '/messages', as, { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }], apply_markdown: false });
    return r.body.messages.map((m: any) => ({ sender: m.sender_full_name, content: m.content }));
  };
  t.equal((await s.api('POST', `/user_groups/${id}/members`, admin, { add: [hamlet.id, admin.id, bot.id].filter((u) => u !== admin.id), delete: [othello.id] })).status, 200);
  t.same(await latest(hamlet), [{ sender: 'Notification Bot', content: `@_**Iago|${admin.id}** added you to the group @_*support*.` }]);
  t.same(await latest(othello), [{ sender: 'Notification Bot', content: `@_**Iago|${admin.id}** removed you from the group @_*support*.` }]);
  t.same(await latest(admin), [], 'not the one who made the change');
  t.equal((await s.api('POST', `/user_groups/${id}/members`, hamlet, { delete: [hamlet.id] })).status, 200);
  t.equal((await latest(hamlet)).length, 1, 'leaving on one\'s own sends nothing');
});
