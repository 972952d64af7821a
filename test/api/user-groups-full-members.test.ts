// role:fullmembers by the real server's rules (zerver/actions/user_groups.py
// update_users_in_full_members_system_group and promote_new_full_members, do_create_user,
// do_change_user_role, do_set_realm_property for waiting_period_threshold; its tests
// test_update_users_in_full_members_system_group and test_promote_new_full_members): a member whose
// account is waiting_period_threshold whole days old (0 by default: at once) is a direct member.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const DAY_MS = 86_400_000;

async function groupIds(s: TestServer): Promise<Record<string, number>> {
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  return Object.fromEntries(groups.map((g) => [g.name, g.id]));
}

async function directMembers(s: TestServer, name: string): Promise<number[]> {
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ name: string; members: number[] }>;
  return groups.find((g) => g.name === name)!.members;
}

/** The realm_user / user_group / realm events, in order, as `type op group user_ids` lines. */
function summary(events: Array<Record<string, any>>, names: Record<string, number>): string[] {
  const nameOf = (id: number) => Object.keys(names).find((n) => names[n] === id) ?? String(id);
  return events.flatMap((e) => {
    if (e.type === 'user_group' && (e.op === 'add_members' || e.op === 'remove_members')) return [`${e.op} ${nameOf(e.group_id)} ${e.user_ids.join(',')}`];
    if (e.type === 'realm_user' && e.op === 'update' && 'role' in e.person) return [`role ${e.person.user_id} ${e.person.role}`];
    if (e.type === 'realm' && (e.property === 'waiting_period_threshold' || e.data?.waiting_period_threshold !== undefined)) return ['threshold'];
    return [];
  });
}

const setThreshold = (s: TestServer, days: number) => s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: days });

t.test('the system groups nest owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂ members ⊂ everyone ⊂ internet', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ name: string; direct_subgroup_ids: number[] }>;
  const subgroups = Object.fromEntries(groups.filter((g) => g.name.startsWith('role:')).map((g) => [g.name, g.direct_subgroup_ids]));
  t.same(subgroups, {
    'role:owners': [],
    'role:administrators': [ids['role:owners']],
    'role:moderators': [ids['role:administrators']],
    'role:fullmembers': [ids['role:moderators']],
    'role:members': [ids['role:fullmembers']],
    'role:everyone': [ids['role:members']],
    'role:internet': [ids['role:everyone']],
    'role:nobody': [],
  });
  t.same(await directMembers(s, 'role:fullmembers'), [], 'the owner is in it through the subgroups, not directly');
});

t.test('with the default threshold (0) a new member is a full member from creation', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  let created = 0;
  const events = await verifyAction(t, s, admin, async () => {
    const r = await s.api('POST', '/users', s.owner, { email: 'new@example.com', password: 'secret-pass-1', full_name: 'New' });
    t.equal(r.status, 200);
    created = r.body.user_id;
  });
  t.same(summary(events, ids), [`add_members role:members ${created}`, `add_members role:fullmembers ${created}`], 'its role group, then role:fullmembers');

  const guest = await s.user(Role.GUEST, 'Guest');
  const moderator = await s.user(Role.MODERATOR, 'Mod');
  const member = await s.user(Role.MEMBER, 'Member');
  const bot = await s.api('POST', '/bots', member, { full_name: 'Helper', short_name: 'helper' });
  t.equal(bot.status, 200);
  t.same(await directMembers(s, 'role:fullmembers'), [created, member.id, bot.body.user_id].sort((a, b) => a - b),
    'members and their bots; not guests, moderators, administrators or owners');
});

t.test('changing the threshold moves recent members out and back at once, after the realm update', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const moderator = await s.user(Role.MODERATOR, 'Mod');

  const raised = await verifyAction(t, s, alice, async () => t.equal((await setThreshold(s, 10)).status, 200));
  t.same(summary(raised, ids), ['threshold', `remove_members role:fullmembers ${alice.id},${bob.id}`]);
  t.same(await directMembers(s, 'role:fullmembers'), []);
  t.ok((await directMembers(s, 'role:members')).includes(alice.id), 'still members');

  const unchanged = await verifyAction(t, s, moderator, async () => t.equal((await setThreshold(s, 20)).status, 200));
  t.same(summary(unchanged, ids), ['threshold'], 'nobody to move: no membership event');

  const lowered = await verifyAction(t, s, moderator, async () => t.equal((await setThreshold(s, 0)).status, 200));
  t.same(summary(lowered, ids), ['threshold', `add_members role:fullmembers ${alice.id},${bob.id}`]);
  t.same(await directMembers(s, 'role:fullmembers'), [alice.id, bob.id]);

  // In the log: one event per change, on the realm's group stream.
  const logged = await s.platform.db.selectFrom('events').select(['type', 'stream_id']).where('type', 'in', ['UserGroupMembersAdded', 'UserGroupMembersRemoved']).orderBy('position').execute();
  t.same(logged.map((e) => e.type), ['UserGroupMembersAdded', 'UserGroupMembersAdded', 'UserGroupMembersRemoved', 'UserGroupMembersAdded']);
  t.ok(logged.every((e) => e.stream_id === 'user-groups-1'));
});

t.test('role changes to and from member move the user into and out of role:fullmembers', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');

  const promoted = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${alice.id}`, s.owner, { role: Role.MODERATOR }));
  t.same(summary(promoted, ids), [
    `role ${alice.id} ${Role.MODERATOR}`,
    `remove_members role:members ${alice.id}`,
    `add_members role:moderators ${alice.id}`,
    `remove_members role:fullmembers ${alice.id}`,
  ], 'as do_change_user_role: the role, the role groups, then role:fullmembers');

  const admins = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${alice.id}`, s.owner, { role: Role.ADMINISTRATOR }));
  t.same(summary(admins, ids), [`role ${alice.id} ${Role.ADMINISTRATOR}`, `remove_members role:moderators ${alice.id}`, `add_members role:administrators ${alice.id}`],
    'no member role on either side: role:fullmembers is not touched');

  const back = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${alice.id}`, s.owner, { role: Role.MEMBER }));
  t.same(summary(back, ids), [
    `role ${alice.id} ${Role.MEMBER}`,
    `remove_members role:administrators ${alice.id}`,
    `add_members role:members ${alice.id}`,
    `add_members role:fullmembers ${alice.id}`,
  ]);

  const guest = await s.user(Role.GUEST, 'Guest');
  const joined = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${guest.id}`, s.owner, { role: Role.MEMBER }));
  t.same(summary(joined, ids), [
    `role ${guest.id} ${Role.MEMBER}`,
    `remove_members role:everyone ${guest.id}`,
    `add_members role:members ${guest.id}`,
    `add_members role:fullmembers ${guest.id}`,
  ]);
  const demoted = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${guest.id}`, s.owner, { role: Role.GUEST }));
  t.same(summary(demoted, ids).at(-1), `remove_members role:fullmembers ${guest.id}`);

  // Within the waiting period a new member does not join it.
  t.equal((await setThreshold(s, 10)).status, 200);
  const recent = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${guest.id}`, s.owner, { role: Role.MEMBER }));
  t.same(summary(recent, ids), [`role ${guest.id} ${Role.MEMBER}`, `remove_members role:everyone ${guest.id}`, `add_members role:members ${guest.id}`]);
});

t.test('deactivation takes the account and its bots out; reactivation brings it back', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = (await s.api('POST', '/bots', alice, { full_name: 'Helper', short_name: 'helper' })).body.user_id as number;
  t.same(await directMembers(s, 'role:fullmembers'), [alice.id, bot]);

  // The log records them leaving role:fullmembers; clients that may know them hear of it through
  // realm_user update is_active false alone, as on the real server (bot first, then its owner).
  const gone = await verifyAction(t, s, admin, () => s.api('DELETE', `/users/${alice.id}`, admin));
  t.same(summary(gone, ids), [], 'no user_group event for whoever gets the deactivation');
  t.same(gone.filter((e) => e.type === 'realm_user').map((e) => e.person), [{ user_id: bot, is_active: false }, { user_id: alice.id, is_active: false }]);
  t.same(await directMembers(s, 'role:fullmembers'), []);

  // As do_reactivate_user: add_members for each of the user's groups, by group id.
  const back = await verifyAction(t, s, admin, () => s.api('POST', `/users/${alice.id}/reactivate`, admin));
  t.same(summary(back, ids), [`add_members role:fullmembers ${alice.id}`, `add_members role:members ${alice.id}`], 'the bot stays deactivated');
});

t.test('the promotion job makes members full members once their waiting period has passed', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  t.equal((await setThreshold(s, 10)).status, 200);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const guest = await s.user(Role.GUEST, 'Guest');
  t.same(await directMembers(s, 'role:fullmembers'), [], 'a new account waits');

  const now = Date.now();
  t.same(await s.fullMembers.runOnce(new Date(now)), { added: 0, removed: 0 });
  // The real server counts whole days (timedelta.days): 9 days and 23 hours is still 9.
  t.same(await s.fullMembers.runOnce(new Date(now + 10 * DAY_MS - 3_600_000)), { added: 0, removed: 0 });

  const later = new Date(now + 10 * DAY_MS + 60_000);
  const promoted = await verifyAction(t, s, admin, async () => t.same(await s.fullMembers.runOnce(later), { added: 1, removed: 0 }));
  t.same(summary(promoted, ids), [`add_members role:fullmembers ${alice.id}`], 'the member, not the guest');
  t.same(await directMembers(s, 'role:fullmembers'), [alice.id]);
  t.notOk((await directMembers(s, 'role:fullmembers')).includes(guest.id));

  // Two processes passing together: one appends, the other decides again and finds nothing to do.
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const results = await Promise.all([s.fullMembers.runOnce(later), s.fullMembers.runOnce(later), s.fullMembers.runOnce(later)]);
  t.equal(results.reduce((sum, r) => sum + r.added, 0), 2, 'each member promoted once');
  t.same(await directMembers(s, 'role:fullmembers'), [alice.id, bob.id, carol.id]);
  const adds = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'UserGroupMembersAdded')
    .where('stream_id', '=', 'user-groups-1').execute();
  const promotions = adds.flatMap((row) => row.data.user_ids as number[]).filter((id) => id === bob.id || id === carol.id);
  t.same(promotions.sort((a, b) => a - b), [bob.id, carol.id], 'one membership event each in the log');
  t.same(await s.fullMembers.runOnce(later), { added: 0, removed: 0 });

  // Run by the server itself (no request): no acting user, an internal client.
  const last = await s.platform.db.selectFrom('events').select('metadata').where('type', '=', 'UserGroupMembersAdded').orderBy('position', 'desc').executeTakeFirstOrThrow();
  t.match(last.metadata, { actor_id: null, client: 'internal: promote new full members' });
});

t.test('group-valued permissions follow role:fullmembers as it changes', async (t) => {
  const s = await startTestServer(t);
  const ids = await groupIds(s);
  const alice: TestUser = await s.user(Role.MEMBER, 'Alice');
  t.equal((await s.api('PATCH', '/realm', s.owner, { create_multiuse_invite_group: ids['role:fullmembers'] })).status, 200);
  t.equal((await s.api('POST', '/invites/multiuse', alice, {})).status, 200, 'a full member may');
  t.equal((await setThreshold(s, 10)).status, 200);
  t.equal((await s.api('POST', '/invites/multiuse', alice, {})).body.msg, 'Insufficient permission', 'a new member may not');
  t.equal((await s.fullMembers.runOnce(new Date(Date.now() + 11 * DAY_MS))).added, 1);
  t.equal((await s.api('POST', '/invites/multiuse', alice, {})).status, 200, 'once promoted, they may');
});

t.test('signups at the same time as a pass: each new member joins exactly once', async (t) => {
  const s = await startTestServer(t);
  const [users] = await Promise.all([
    Promise.all(Array.from({ length: 6 }, (_, i) => s.user(Role.MEMBER, `Signup ${i}`))),
    s.fullMembers.runOnce(),
    s.fullMembers.runOnce(),
  ]);
  const ids = users.map((u) => u.id).sort((a, b) => a - b);
  t.same(await directMembers(s, 'role:fullmembers'), ids);
  const adds = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'UserGroupMembersAdded').execute();
  t.same(adds.flatMap((row) => row.data.user_ids as number[]).sort((a, b) => a - b), ids, 'one membership event per account');
  t.same(await s.fullMembers.runOnce(), { added: 0, removed: 0 });
});
