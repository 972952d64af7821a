import t from 'tap';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendDm } from '../helpers/channels-fixture.js';

const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

t.test('PATCH /users/{id}: who may change whom, and the name rules', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const bot = await s.user(Role.MEMBER, 'Alice Bot', { bot_type: 1, bot_owner_id: alice.id });
  const nameOf = async (u: TestUser) => (await s.api('GET', `/users/${u.id}`, admin)).body.user.full_name as string;

  t.same((await s.api('PATCH', '/users/1000', admin, {})).body, error('No such user'));
  // Changing another account is an administrator's (or a bot's owner's) right; for anyone else the
  // answer is the same whether the change would be a name, a role or one's own promotion.
  t.same((await s.api('PATCH', `/users/${bob.id}`, alice, { full_name: 'New Name' })).body, error('Insufficient permission'));
  t.same((await s.api('PATCH', `/users/${alice.id}`, alice, { role: Role.ADMINISTRATOR })).body, error('Insufficient permission'));
  t.same((await s.api('PATCH', `/users/${bot.id}`, alice, { full_name: 'Renamed Bot' })).body, { result: 'success', msg: '' }, "a bot's owner may rename it");
  t.same((await s.api('PATCH', `/users/${bot.id}`, alice, { role: Role.ADMINISTRATOR })).body,
    error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'), 'but roles are for administrators');

  const names: Array<[string, string]> = [
    ['a'.repeat(101), 'Name too long!'],
    ['a', 'Name too short!'],
    [' b ', 'Name too short!'],
    ['iago|72', 'Invalid format!'],
    ['Hello- 12iago|72', 'Invalid format!'],
    ['Opheli*', 'Invalid characters in name!'],
    ['Zero\u200bWidth', 'Invalid characters in name!'],
    ['Del\u007fete', 'Invalid characters in name!'],
  ];
  for (const [name, msg] of names) {
    t.same((await s.api('PATCH', `/users/${bob.id}`, admin, { full_name: name })).body, error(msg), JSON.stringify(name));
  }
  t.equal(await nameOf(bob), 'Bob', 'no refused name was kept');
  t.equal((await s.api('PATCH', `/users/${bob.id}`, admin, { full_name: 'Hello- 12iago|72k' })).status, 200, 'digits after the bar in the middle are fine');
  t.equal(await nameOf(bob), 'Hello- 12iago|72k');
  t.equal((await s.api('PATCH', `/users/${bob.id}`, admin, { full_name: '   ' })).status, 200, "an administrator's blank name is no change");
  t.equal(await nameOf(bob), 'Hello- 12iago|72k');
  t.same((await s.api('PATCH', '/settings', bob, { full_name: '   ' })).body, error('Name too short!'), "the user's own blank name is refused");
});

t.test('require_unique_names compares compatibility-normalized, case-folded names of every account', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const iago = await s.user(Role.MEMBER, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  t.equal((await s.api('PATCH', '/realm', s.owner, { require_unique_names: true })).status, 200);
  for (const name of ['IaGo', '𝕚𝕒𝕘𝕠', 'ｉａｇｏ', '𝒾𝒶𝑔𝑜']) {
    t.same((await s.api('PATCH', `/users/${hamlet.id}`, admin, { full_name: name })).body, error('Unique names required in this organization.'), name);
  }
  t.same((await s.api('PATCH', '/settings', hamlet, { full_name: 'IAGO' })).body, error('Unique names required in this organization.'), 'the own-settings path too');
  await s.api('DELETE', `/users/${iago.id}`, admin);
  t.same((await s.api('PATCH', `/users/${hamlet.id}`, admin, { full_name: 'iago' })).body, error('Unique names required in this organization.'),
    'a deactivated account keeps its name');
  t.equal((await s.api('PATCH', `/users/${hamlet.id}`, admin, { full_name: 'HAMLET' })).status, 200, "one's own name in another case is not a clash");
  const created = await s.api('POST', '/bots', hamlet, { full_name: 'Iago', short_name: 'iagobot' });
  t.same(created.body, error('Unique names required in this organization.'), 'nor for a new bot');
  t.equal((await s.api('PATCH', '/realm', s.owner, { require_unique_names: false })).status, 200);
  t.equal((await s.api('PATCH', `/users/${hamlet.id}`, admin, { full_name: 'iago' })).status, 200, 'allowed once the setting is off');
});

t.test('roles: owners for owner changes, administrators for the rest, never the last owner', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const ownerBot = await s.user(Role.MEMBER, 'Owner Bot', { bot_type: 1, bot_owner_id: s.owner.id });
  const roleOf = async (u: TestUser) => (await s.api('GET', `/users/${u.id}`, admin)).body.user.role as number;

  t.same((await s.api('PATCH', `/users/${othello.id}`, admin, { role: Role.OWNER })).body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  t.same((await s.api('PATCH', `/users/${othello.id}`, admin, { role: 700 })).body, error('Invalid role'));
  t.same((await s.api('PATCH', `/users/${admin.id}`, othello, { role: 700 })).body, error('Invalid role'), 'a bad role is refused before any permission check');
  const events = await verifyAction(t, s, admin, () => s.api('PATCH', `/users/${othello.id}`, s.owner, { role: Role.OWNER }));
  t.same(events.filter((e) => e.type === 'realm_user').map((e) => e.person), [{ user_id: othello.id, role: Role.OWNER }]);
  t.same((await s.api('PATCH', `/users/${othello.id}`, admin, { role: Role.MEMBER })).body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
    'only an owner may take the owner role away');
  t.equal((await s.api('PATCH', `/users/${othello.id}`, s.owner, { role: Role.MEMBER })).status, 200);
  t.equal(await roleOf(othello), Role.MEMBER);
  t.equal((await s.api('PATCH', `/users/${othello.id}`, admin, { role: Role.MEMBER })).status, 200, 'the role it already has: nothing to check or change');

  // A bot with the owner role is no organization owner: the only human owner stays protected, and the bot may be demoted.
  t.equal((await s.api('PATCH', `/users/${ownerBot.id}`, s.owner, { role: Role.OWNER })).status, 200);
  t.same((await s.api('PATCH', `/users/${s.owner.id}`, s.owner, { role: Role.MEMBER })).body,
    error('The owner permission cannot be removed from the only organization owner.'));
  t.equal((await s.api('PATCH', `/users/${ownerBot.id}`, s.owner, { role: Role.MEMBER })).status, 200);
  t.equal(await roleOf(s.owner), Role.OWNER);
});

t.test('deactivating and reactivating others', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const webhook = await s.user(Role.MEMBER, 'Webhook Bot', { bot_type: 2, bot_owner_id: alice.id });

  t.same((await s.api('DELETE', `/users/${bob.id}`, alice)).body, error('Insufficient permission'));
  t.same((await s.api('POST', `/users/${bob.id}/reactivate`, alice)).body, error('Insufficient permission'));
  t.same((await s.api('DELETE', `/users/${s.owner.id}`, admin)).body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  t.same((await s.api('DELETE', '/users/1000', s.owner)).body, error('No such user'));
  t.same((await s.api('DELETE', `/users/${webhook.id}`, s.owner)).body, error('No such user'), 'a bot is deactivated through /bots');
  t.same((await s.api('DELETE', `/users/${s.owner.id}`, s.owner)).body, error('Cannot deactivate the only organization owner'));

  const events = await verifyAction(t, s, alice, () => s.api('DELETE', `/users/${bob.id}`, admin));
  t.same(events.filter((e) => e.type === 'realm_user').map((e) => e.person), [{ user_id: bob.id, is_active: false }]);
  t.same((await s.api('DELETE', `/users/${bob.id}`, admin)).body, error('User is deactivated'));
  t.same((await s.api('POST', '/users/1000/reactivate', admin)).body, error('No such user'));
  t.equal((await s.api('POST', `/users/${bob.id}/reactivate`, admin)).status, 200);
  const again = await verifyAction(t, s, alice, () => s.api('POST', `/users/${bob.id}/reactivate`, admin));
  t.same(again, [], 'reactivating an active account succeeds and changes nothing');
});

t.test('a deactivation notice is mailed only when a comment (even an empty one) is given', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'users-replay-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const mails = async () => {
    const dir = path.join(dataDir, 'emails');
    const files = await readdir(dir).catch(() => [] as string[]);
    return Promise.all(files.sort().map((f) => readFile(path.join(dir, f), 'utf8')));
  };
  const quiet = await s.user(Role.MEMBER, 'Quiet');
  const told = await s.user(Role.MEMBER, 'Told');
  const long = await s.api('DELETE', `/users/${told.id}`, s.owner, { deactivation_notification_comment: 'x'.repeat(2001) });
  t.same(long.body, error('deactivation_notification_comment is too long (limit: 2000 characters)'));
  t.equal((await s.api('DELETE', `/users/${quiet.id}`, s.owner)).status, 200);
  t.same(await mails(), [], 'no comment, no mail');
  const r = await s.api('DELETE', `/users/${told.id}`, s.owner, { deactivation_notification_comment: '  Dear Told,\nyou just got deactivated.  ' });
  t.same(r.body, { result: 'success', msg: '' });
  const [mail] = await mails();
  t.match(mail, `To: ${told.email}\n`);
  t.match(mail, /Subject: Notification of account deactivation on /);
  t.match(mail, 'Dear Told,\nyou just got deactivated.');
});

t.test('a bot comes back only under a free name, and with a new owner if its owner is gone', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const created = await s.api('POST', '/bots', alice, { full_name: 'Helper', short_name: 'helper' });
  const botId = created.body.user_id as number;
  t.equal((await s.api('DELETE', `/bots/${botId}`, alice)).status, 200);
  const other = await s.api('POST', '/bots', admin, { full_name: 'Helper', short_name: 'helper2' });
  t.equal(other.status, 200);
  t.same((await s.api('POST', `/users/${botId}/reactivate`, alice)).body,
    error('There is already an active bot named "Helper" in this organization. To reactivate this bot, you must rename or deactivate the other one first.'));
  t.equal((await s.api('DELETE', `/bots/${other.body.user_id}`, admin)).status, 200);
  t.equal((await s.api('POST', `/users/${botId}/reactivate`, alice)).status, 200, "the bot's owner may bring it back");

  t.equal((await s.api('DELETE', `/users/${alice.id}`, admin)).status, 200, "deactivating Alice deactivates her bot");
  t.equal((await s.api('POST', `/users/${botId}/reactivate`, admin)).status, 200);
  const bot = (await s.api('GET', `/users/${botId}`, admin)).body.user;
  t.match(bot, { is_active: true, bot_owner_id: admin.id }, 'the administrator who reactivated it owns it now');
});

t.test('DELETE /users/me: never the only account or the only owner', async (t) => {
  const s = await startTestServer(t);
  const only = await s.api('DELETE', '/users/me', s.owner);
  t.same(only.body, { ...error('Cannot deactivate the only user.', 'CANNOT_DEACTIVATE_LAST_USER'), is_last_owner: false, entity: 'user' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const owner = await s.api('DELETE', '/users/me', s.owner);
  t.same(owner.body, { ...error('Cannot deactivate the only organization owner.', 'CANNOT_DEACTIVATE_LAST_USER'), is_last_owner: true, entity: 'organization owner' });
  const bot = await s.user(Role.MEMBER, 'Alice Bot', { bot_type: 1, bot_owner_id: alice.id });
  t.equal((await s.api('DELETE', '/users/me', alice)).status, 200);
  const rows = (await s.api('GET', '/users', s.owner)).body.members as Array<{ user_id: number; is_active: boolean }>;
  t.same(rows.filter((u) => [alice.id, bot.id].includes(u.user_id)).map((u) => u.is_active), [false, false], 'her bots go with her');
});

/** A guest limited by can_access_all_users_group = role:members, and who they share what with. */
async function limitedGuestSetup(s: TestServer) {
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const members = groups.find((g) => g.name === 'role:members')!.id;
  const guest = await s.user(Role.GUEST, 'Guest');
  const shared = await s.user(Role.MEMBER, 'Shared');
  const former = await s.user(Role.MEMBER, 'Former');
  const writer = await s.user(Role.MEMBER, 'Writer');
  const stranger = await s.user(Role.MEMBER, 'Stranger');
  const bot = await s.user(Role.MEMBER, 'Stranger Bot', { bot_type: 1, bot_owner_id: stranger.id });
  const common = await createChannel(s, s.owner, 'common', [guest, shared, former]);
  await createChannel(s, s.owner, 'elsewhere', [stranger]);
  await sendDm(s, writer, [guest], 'hello');
  t.equal((await s.api('PATCH', '/realm', s.owner, { can_access_all_users_group: members })).status, 200);
  // A deactivated user seen only through a channel is no longer accessible; one seen through a DM stays so.
  await s.api('DELETE', `/users/${former.id}`, s.owner);
  return { guest, shared, former, writer, stranger, bot, common };
}

t.test('limited user access: what a guest outside can_access_all_users_group sees of others', async (t) => {
  const s = await startTestServer(t);
  const { guest, shared, former, writer, stranger, bot, common } = await limitedGuestSetup(s);
  const member = await s.user(Role.MEMBER, 'Member');

  const host = new URL((await s.api('GET', '/server_settings', null)).body.realm_uri as string).host;
  const list = (await s.api('GET', '/users', guest)).body.members as Array<Record<string, unknown>>;
  const byId = new Map(list.map((u) => [u.user_id as number, u]));
  for (const u of [guest, shared, writer, bot, s.owner]) t.not(byId.get(u.id)?.full_name, 'Unknown user', `user ${u.id} is accessible`);
  for (const u of [former, stranger, member]) {
    t.same(byId.get(u.id), {
      email: `user${u.id}@${host}`,
      user_id: u.id, avatar_version: 1, is_admin: false, is_owner: false, is_guest: false, is_billing_admin: false,
      role: Role.MEMBER, is_bot: false, full_name: 'Unknown user', timezone: '', is_active: true,
      date_joined: '1970-01-01T00:00:00+00:00', delivery_email: null, avatar_url: '/static/images/unknown-user-avatar.png', profile_data: {},
    }, `user ${u.id} is a placeholder`);
  }
  t.equal(list.length, (await s.api('GET', '/users', member)).body.members.length, 'the list keeps every id');

  for (const u of [former, stranger]) {
    t.same((await s.api('GET', `/users/${u.id}`, guest)).body, error('Insufficient permission'), `GET /users/${u.id}`);
    t.same((await s.api('POST', `/users/me/muted_users/${u.id}`, guest)).body, error('Insufficient permission'), `mute ${u.id}`);
  }
  t.same((await s.api('GET', `/users/${stranger.email}`, guest)).body, error('Insufficient permission'), 'by address too');
  t.same((await s.api('GET', `/users/${stranger.id}/subscriptions/${common}`, guest)).body, error('Insufficient permission'), 'nor their subscriptions');
  t.same((await s.api('GET', `/users/${shared.id}/subscriptions/${common}`, guest)).body, { result: 'success', msg: '', is_subscribed: true });
  t.equal((await s.api('GET', `/users/${writer.id}`, guest)).status, 200, 'a DM partner is accessible');
  t.equal((await s.api('GET', `/users/${bot.id}`, guest)).status, 200, 'every bot is accessible');
  t.equal((await s.api('POST', `/users/me/muted_users/${shared.id}`, guest)).status, 200, 'an accessible user may be muted');
  t.equal((await s.api('POST', `/users/me/muted_users/${stranger.id}`, member)).status, 200, 'members are not limited');
  const avatar = async (as: TestUser, id: number) =>
    (await s.fastify.inject({ method: 'GET', url: `/avatar/${id}`, headers: { authorization: as.auth } })).headers.location as string;
  t.equal(await avatar(guest, stranger.id), '/static/images/unknown-user-avatar.png', "the avatar of someone they cannot access is the unknown user's");
  t.not(await avatar(member, stranger.id), '/static/images/unknown-user-avatar.png');
  t.not(await avatar(guest, shared.id), '/static/images/unknown-user-avatar.png');

  const reg = (await s.api('POST', '/register', guest, { fetch_event_types: ['realm_user'] })).body;
  const placeholders = (reg.realm_users as Array<Record<string, unknown>>).filter((u) => u.full_name === 'Unknown user').map((u) => u.user_id);
  t.same(placeholders.sort(), [former.id, stranger.id, member.id].sort(), '/register lists placeholders among the active users');
  t.notOk((reg.realm_non_active_users as Array<{ user_id: number }>).some((u) => u.user_id === former.id));
  const incomplete = (await s.api('POST', '/register', guest, { fetch_event_types: ['realm_user'], client_capabilities: { user_list_incomplete: true } })).body;
  t.notOk((incomplete.realm_users as Array<{ user_id: number }>).some((u) => [former.id, stranger.id, member.id].includes(u.user_id)),
    'with user_list_incomplete they are left out');
});

t.test('limited user access: a guest hears of changes to accessible users only', async (t) => {
  const s = await startTestServer(t);
  const { guest, shared, stranger } = await limitedGuestSetup(s);
  const events = await verifyAction(t, s, guest, async () => {
    await s.api('PATCH', `/users/${stranger.id}`, s.owner, { full_name: 'Still Unknown' });
    await s.api('PATCH', `/users/${shared.id}`, s.owner, { full_name: 'Shared Renamed' });
    await s.api('PATCH', `/users/${stranger.id}`, s.owner, { role: Role.MODERATOR });
  }, { register: { fetch_event_types: ['realm_user'], event_types: ['realm_user'] } });
  t.same(events.map((e) => e.person), [{ user_id: shared.id, full_name: 'Shared Renamed' }]);

  let newcomer = 0;
  const added = await verifyAction(t, s, guest, async () => {
    newcomer = (await s.user(Role.MEMBER, 'Newcomer')).id;
    await s.api('DELETE', '/users/me/avatar', stranger);
  }, { register: { fetch_event_types: ['realm_user'], event_types: ['realm_user'] } });
  t.same(added.map((e) => [e.op, e.person.user_id, e.person.full_name]), [['add', newcomer, 'Unknown user']], 'a newcomer they cannot access arrives as a placeholder');
  const incomplete = await verifyAction(t, s, guest, () => s.user(Role.MEMBER, 'Another'),
    { register: { fetch_event_types: ['realm_user'], event_types: ['realm_user'], client_capabilities: { user_list_incomplete: true } } });
  t.same(incomplete, [], 'and not at all with user_list_incomplete');
});

t.test("profile data: each value must suit its field's type", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const gone = await s.user(Role.MEMBER, 'Gone');
  const bot = await s.user(Role.MEMBER, 'Some Bot', { bot_type: 1, bot_owner_id: admin.id });
  await s.api('DELETE', `/users/${gone.id}`, admin);
  const field = async (name: string, field_type: number, extra: Record<string, unknown> = {}) =>
    (await s.api('POST', '/realm/profile_fields', s.owner, { name, hint: '', field_type, ...extra })).body.id as number;
  const phone = await field('Phone number', 1);
  const bio = await field('Biography', 2);
  const editor = await field('Favorite editor', 3, { field_data: { 0: { text: 'Vim', order: '1' }, 1: { text: 'Emacs', order: '2' } } });
  const birthday = await field('Birthday', 4);
  const site = await field('Favorite website', 5);
  const mentor = await field('Mentor', 6);
  const set = (id: number, value: unknown) => s.api('PATCH', `/users/${cordelia.id}`, admin, { profile_data: [{ id, value }] });

  const good = await s.api('PATCH', `/users/${cordelia.id}`, admin, {
    profile_data: [{ id: phone, value: 'short text data' }, { id: bio, value: 'long text data' }, { id: editor, value: '0' },
      { id: birthday, value: '1909-03-05' }, { id: site, value: 'https://zulip.com' }, { id: mentor, value: [cordelia.id] }],
  });
  t.equal(good.status, 200);
  const cases: Array<[number, unknown, string]> = [
    [editor, 'invalid choice', "'invalid choice' is not a valid choice for 'Favorite editor'."],
    [birthday, '1909-34-55', 'Birthday is not a date'],
    [birthday, '1909-02-30', 'Birthday is not a date'],
    [site, 'not url', 'Favorite website is not a URL'],
    [mentor, 'not list of user ids', 'User IDs is not a list'],
    [mentor, ['1'], 'User IDs[0] is not an integer'],
    [mentor, [999999], 'Invalid user ID: 999999'],
    [mentor, [gone.id], `User with ID ${gone.id} is deactivated`],
    [mentor, [bot.id], `User with ID ${bot.id} is a bot`],
    [phone, 'x'.repeat(51), 'Phone number is too long (limit: 50 characters)'],
    [bio, 'x'.repeat(501), 'Biography is too long (limit: 500 characters)'],
    [9001, 'some data', 'Field id 9001 not found.'],
    [9001, '', 'Field id 9001 not found.'],
  ];
  for (const [id, value, msg] of cases) t.same((await set(id, value)).body, error(msg), `${id}: ${JSON.stringify(value)}`);
  const cleared = await s.api('PATCH', `/users/${cordelia.id}`, admin, { profile_data: [{ id: phone, value: '' }, { id: mentor, value: [] }, { id: site, value: null }] });
  t.equal(cleared.status, 200, 'empty values clear');
  const data = (await s.api('GET', `/users/${cordelia.id}`, admin, { include_custom_profile_fields: true })).body.user.profile_data;
  t.notOk(data[phone] ?? data[String(phone)], 'phone cleared');
  t.match(data[String(birthday)], { value: '1909-03-05' });
  t.same((await s.api('PATCH', '/users/me/profile_data', cordelia, { data: [{ id: birthday, value: 'soon' }] })).body, error('Birthday is not a date'),
    "the user's own changes follow the same rules");
});
