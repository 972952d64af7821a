import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

t.test('users: list, fetch by id and email, and field rules', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const guest = await s.user(Role.GUEST, 'Guest');

  const list = await s.api('GET', '/users', member);
  t.equal(list.status, 200);
  t.equal(list.body.result, 'success');
  const ids = list.body.members.map((u: { user_id: number }) => u.user_id);
  t.ok(ids.includes(s.owner.id) && ids.includes(member.id) && ids.includes(guest.id));

  const byId = await s.api('GET', `/users/${member.id}`, s.owner);
  t.equal(byId.body.user.full_name, 'Member');
  t.equal(byId.body.user.role, Role.MEMBER);
  t.equal(byId.body.user.is_admin, false);
  t.notOk('profile_data' in byId.body.user, 'profile_data only when asked for');

  const byEmail = await s.api('GET', `/users/${encodeURIComponent(member.email)}`, s.owner);
  t.equal(byEmail.body.user.user_id, member.id);

  const missing = await s.api('GET', '/users/999999', s.owner);
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, 'No such user');

  const me = await s.api('GET', '/users/me', guest);
  t.equal(me.body.is_guest, true);
  t.equal(me.body.role, Role.GUEST);
});

t.test('users: delivery_email follows email_address_visibility', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Viewer');
  const hidden = await s.user(Role.MEMBER, 'Hidden');
  await s.platform.db
    .updateTable('users')
    .set({ settings: JSON.stringify({ email_address_visibility: 3 }) })
    .where('id', '=', hidden.id)
    .execute();
  const asMember = await s.api('GET', `/users/${hidden.id}`, member);
  t.equal(asMember.body.user.delivery_email, null, 'members cannot see an admins-only address');
  t.match(asMember.body.user.email, /^user\d+@/, 'API email is a fake address');
  const asOwner = await s.api('GET', `/users/${hidden.id}`, s.owner);
  t.equal(asOwner.body.user.delivery_email, hidden.email);
});

t.test('users: administration', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');

  const created = await s.api('POST', '/users', admin, { email: 'new@example.com', full_name: 'New Person', password: 'secret123' });
  t.equal(created.status, 200);
  t.type(created.body.user_id, 'number');

  const duplicate = await s.api('POST', '/users', admin, { email: 'NEW@example.com', full_name: 'Again' });
  t.equal(duplicate.status, 400);

  const denied = await s.api('POST', '/users', member, { email: 'x@example.com', full_name: 'X' });
  t.equal(denied.body.code, 'UNAUTHORIZED_PRINCIPAL');

  const key = await s.api('POST', '/fetch_api_key', null, { username: 'new@example.com', password: 'secret123' });
  t.equal(key.status, 200);
  t.equal(key.body.api_key.length, 32);
  const badPassword = await s.api('POST', '/fetch_api_key', null, { username: 'new@example.com', password: 'nope' });
  t.equal(badPassword.status, 401);
  t.equal(badPassword.body.code, 'AUTHENTICATION_FAILED');

  const rename = await s.api('PATCH', `/users/${member.id}`, admin, { full_name: 'Renamed' });
  t.equal(rename.status, 200);
  t.equal((await s.api('GET', `/users/${member.id}`, admin)).body.user.full_name, 'Renamed');

  const makeOwner = await s.api('PATCH', `/users/${member.id}`, admin, { role: Role.OWNER });
  t.equal(makeOwner.body.code, 'UNAUTHORIZED_PRINCIPAL', 'only owners make owners');
  const makeMod = await s.api('PATCH', `/users/${member.id}`, admin, { role: Role.MODERATOR });
  t.equal(makeMod.status, 200);

  const deactivate = await s.api('DELETE', `/users/${member.id}`, admin);
  t.equal(deactivate.status, 200);
  const asDeactivated = await s.api('GET', '/users', member);
  t.equal(asDeactivated.status, 401);
  t.equal(asDeactivated.body.code, 'USER_DEACTIVATED');
  const reactivate = await s.api('POST', `/users/${member.id}/reactivate`, admin);
  t.equal(reactivate.status, 200);
  t.equal((await s.api('GET', '/users', member)).status, 200);

  const lastOwner = await s.api('DELETE', `/users/${s.owner.id}`, s.owner);
  t.equal(lastOwner.status, 400, 'the only owner cannot be deactivated');

  const bot = await s.api('POST', '/bots', member, { full_name: 'Helper Bot', short_name: 'helper' });
  t.equal(bot.status, 200);
  t.equal(bot.body.api_key.length, 32);
  const botUser = await s.api('GET', `/users/${bot.body.user_id}`, member);
  t.equal(botUser.body.user.is_bot, true);
  t.equal(botUser.body.user.bot_owner_id, member.id);
  t.equal(botUser.body.user.delivery_email, botUser.body.user.email, 'bots always show their real address');

  const regen = await s.api('POST', '/users/me/api_key/regenerate', member);
  t.equal(regen.body.api_key.length, 32);
  const oldKey = await s.api('GET', '/users', member);
  t.equal(oldKey.body.code, 'INVALID_API_KEY', 'the old key stops working');
});
