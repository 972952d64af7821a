/**
 * Erasing an account deactivates it: like a deactivation it leaves its role's system group, and
 * every client hears of it (register, apply the events, compare with a fresh register).
 */
import t from 'tap';
import { startTestServer, Role, type TestServer } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const register = { event_types: ['user_group', 'realm_user'], fetch_event_types: ['realm_user_groups', 'realm_user'] };

async function membersOf(s: TestServer, name: string): Promise<number[]> {
  const groups = (await s.api('POST', '/register', s.owner, { fetch_event_types: ['realm_user_groups'] })).body.realm_user_groups as Array<{ name: string; members: number[] }>;
  return groups.find((g) => g.name === name)!.members;
}

t.test('an erased administrator leaves role:administrators; an erased deactivated member changes no group', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Erased Admin');
  const member = await s.user(Role.MEMBER, 'Gone Member');
  t.ok((await membersOf(s, 'role:administrators')).includes(admin.id));

  const events = await verifyAction(t, s, s.owner, () => s.api('POST', `/users/${admin.id}/erase`, s.owner, {}), { register });
  t.match(events.filter((e) => e.type === 'user_group'), [{ op: 'remove_members', user_ids: [admin.id] }], 'one removal, from the role group');
  t.notOk((await membersOf(s, 'role:administrators')).includes(admin.id));

  t.equal((await s.api('DELETE', `/users/${member.id}`, s.owner)).status, 200);
  const later = await verifyAction(t, s, s.owner, () => s.api('POST', `/users/${member.id}/erase`, s.owner, {}), { register });
  t.same(later.filter((e) => e.type === 'user_group'), [], 'already out of every group: nothing to remove');
});
