/**
 * The client events of a user's lifecycle, in the real server's order and to its audiences, for the
 * acting administrator, the user, another member and guests whose user access is limited
 * (zerver/actions/users.py do_change_user_role and send_events_for_user_deactivation,
 * zerver/actions/create_user.py do_reactivate_user, zerver/actions/bots.py
 * send_bot_owner_update_events; zerver/tests/test_events.py test_change_is_admin, test_change_is_guest,
 * test_change_user_role_for_restricted_users, test_do_deactivate_user, test_do_reactivate_user,
 * test_change_bot_owner). Each sequence is checked by register-apply-compare for every viewer.
 */
import t, { type Test } from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyActionForEach } from '../helpers/verify-action.js';
import { createChannel, sendDm } from '../helpers/channels-fixture.js';

// 'realm': the client recomputes its can_* permissions from the realm's policies and its new role.
const EVENT_TYPES = ['realm', 'realm_user', 'realm_bot', 'user_group', 'stream', 'subscription', 'default_streams'];
const FETCH = ['realm', 'realm_user', 'realm_bot', 'realm_user_groups', 'subscription', 'stream', 'default_streams'];
const register = { event_types: EVENT_TYPES, fetch_event_types: FETCH, include_subscribers: true };

interface World {
  s: TestServer;
  admin: TestUser;
  subject: TestUser;
  other: TestUser;
  /** Subscribed to lobby with the subject: knows them through a channel alone. */
  guestPeer: TestUser;
  /** In a direct message conversation with the subject. */
  guestDm: TestUser;
  /** Shares nothing with the subject. */
  guestFar: TestUser;
  subjectBot: TestUser;
  otherBot: TestUser;
  /** Names of users, channels and groups by id, for the event lines. */
  names: { users: Map<number, string>; channels: Map<number, string>; groups: Map<number, string> };
}

/**
 * Guests see only the users they share something with (can_access_all_users_group = role:members).
 * lobby: public, a default channel (other, subject, guestPeer, the subject's bot); open: public,
 * other alone; secret: private, other alone. team: a group of the subject and other.
 */
async function world(t: Test): Promise<World> {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const subject = await s.user(Role.MEMBER, 'Subject');
  const other = await s.user(Role.MEMBER, 'Other');
  const guestPeer = await s.user(Role.GUEST, 'Guest Peer');
  const guestDm = await s.user(Role.GUEST, 'Guest Dm');
  const guestFar = await s.user(Role.GUEST, 'Guest Far');
  const subjectBot = await s.user(Role.MEMBER, 'Subject Bot', { bot_type: 1, bot_owner_id: subject.id });
  const otherBot = await s.user(Role.MEMBER, 'Other Bot', { bot_type: 1, bot_owner_id: other.id });
  const names = {
    users: new Map<number, string>([[subject.id, 'subject'], [other.id, 'other'], [subjectBot.id, 'subjectBot'], [otherBot.id, 'otherBot'], [admin.id, 'admin']]),
    channels: new Map<number, string>(),
    groups: new Map<number, string>(),
  };
  const lobby = await createChannel(s, other, 'lobby', [subject, guestPeer, subjectBot]);
  const open = await createChannel(s, other, 'open', []);
  const secret = await createChannel(s, other, 'secret', [], { invite_only: true });
  for (const [id, name] of [[lobby, 'lobby'], [open, 'open'], [secret, 'secret']] as const) names.channels.set(id, name);
  t.equal((await s.api('POST', '/default_streams', s.owner, { stream_id: lobby })).status, 200);
  await sendDm(s, guestDm, [subject], 'hello');
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  for (const g of groups) names.groups.set(g.id, g.name);
  const team = await s.api('POST', '/user_groups/create', s.owner, { name: 'team', description: 'A team', members: JSON.stringify([subject.id, other.id]) });
  t.equal(team.status, 200);
  names.groups.set(team.body.group_id, 'team');
  const members = groups.find((g) => g.name === 'role:members')!.id;
  t.equal((await s.api('PATCH', '/realm', s.owner, { can_access_all_users_group: members })).status, 200);
  return { s, admin, subject, other, guestPeer, guestDm, guestFar, subjectBot, otherBot, names };
}

/** One line per event: type/op, then what it names (users, channels and groups by their names here). */
function lines(w: World, events: Array<Record<string, any>>): string[] {
  const user = (id: number) => w.names.users.get(id) ?? String(id);
  const users = (ids: number[]) => ids.map(user).join(',');
  const channels = (ids: number[]) => ids.map((id) => w.names.channels.get(id) ?? String(id)).join(',');
  return events.map((e) => {
    const head = `${e.type}/${e.op}`;
    switch (e.type) {
      case 'realm_user': {
        const { user_id, ...rest } = e.person;
        if (e.op === 'add') return `${head} ${user(user_id)}`;
        return `${head} ${user(user_id)} ${Object.entries(rest).map(([k, v]) => `${k}=${k === 'bot_owner_id' ? user(v as number) : v}`).join(' ')}`;
      }
      case 'realm_bot': {
        const { user_id, ...rest } = e.bot;
        if (e.op !== 'update') return `${head} ${user(user_id)}`;
        return `${head} ${user(user_id)} ${Object.entries(rest).map(([k, v]) => `${k}=${k === 'owner_id' ? user(v as number) : v}`).join(' ')}`;
      }
      case 'user_group': return `${head} ${w.names.groups.get(e.group_id)} ${users(e.user_ids)}`;
      case 'stream': return `${head} ${channels(e.streams.map((s: { stream_id: number }) => s.stream_id))}`;
      case 'subscription': return `${head} ${channels(e.stream_ids)} ${users(e.user_ids)}`;
      default: return head;
    }
  });
}

async function act(t: Test, w: World, viewers: TestUser[], action: () => Promise<{ status: number; body: unknown }>, params = register): Promise<string[][]> {
  const all = await verifyActionForEach(t, w.s, viewers, async () => {
    const res = await action();
    t.equal(res.status, 200, JSON.stringify(res.body));
  }, { register: params });
  return all.map((events) => lines(w, events));
}

const setRole = (w: World, role: number) => () => w.s.api('PATCH', `/users/${w.subject.id}`, w.admin, { role });

t.test('a role change: the role, the role groups, role:fullmembers, then the channels', async (t) => {
  const w = await world(t);
  const viewers = [w.admin, w.subject, w.other, w.guestPeer, w.guestFar];
  const groups = (from: string, to: string, full: 'add' | 'remove') => [
    `user_group/remove_members ${from} subject`,
    `user_group/add_members ${to} subject`,
    `user_group/${full}_members role:fullmembers subject`,
  ];

  const [admin, subject, other, guestPeer, guestFar] = await act(t, w, viewers, setRole(w, Role.ADMINISTRATOR));
  const promoted = ['realm_user/update subject role=200', ...groups('role:members', 'role:administrators', 'remove')];
  t.same(admin, promoted, 'the acting administrator');
  t.same(subject, [...promoted, 'stream/create secret', 'subscription/peer_add secret other'], 'the user, then the private channel coming into view');
  t.same(other, promoted, 'another member');
  t.same(guestPeer, promoted, 'a guest who knows the user through a channel');
  t.same(guestFar, promoted.slice(1), 'a guest who may not know the user gets the group changes alone');

  // realm_bots: all of them now, and the user's own again once demoted (no event: the client
  // reads them again, as the real server's apply_event does; register-apply-compare checks it).
  const bots = async () => ((await w.s.api('POST', '/register', w.subject, register)).body.realm_bots as Array<{ user_id: number }>).map((b) => b.user_id);
  t.same(await bots(), [w.subjectBot.id, w.otherBot.id]);
  const [, demoted] = await act(t, w, viewers, setRole(w, Role.MEMBER));
  t.same(demoted, ['realm_user/update subject role=400', ...groups('role:administrators', 'role:members', 'add'), 'stream/delete secret']);
  t.same(await bots(), [w.subjectBot.id]);

  // Becoming (or ceasing to be) a limited guest changes whom the user may know; the real server
  // sends no event for that, so the guest steps run with every user accessible to guests.
  const everyone = (await w.s.api('GET', '/user_groups', w.s.owner)).body.user_groups.find((g: { name: string }) => g.name === 'role:everyone').id;
  t.equal((await w.s.api('PATCH', '/realm', w.s.owner, { can_access_all_users_group: everyone })).status, 200);
  const [, toGuest, , , far] = await act(t, w, viewers, setRole(w, Role.GUEST));
  const guestGroups = groups('role:members', 'role:everyone', 'remove');
  t.same(toGuest, ['realm_user/update subject role=600', ...guestGroups, 'stream/delete open'], 'a guest sees no public channel it is not subscribed to');
  t.same(far, ['realm_user/update subject role=600', ...guestGroups]);
  t.same((await w.s.api('POST', '/register', w.subject, register)).body.realm_default_streams, [], 'nor default channels');

  const [, toMember] = await act(t, w, viewers, setRole(w, Role.MEMBER));
  t.same(toMember, ['realm_user/update subject role=400', ...groups('role:everyone', 'role:members', 'add'), 'stream/create open', 'subscription/peer_add open other']);
});

t.test('a deactivation: the bots first, then the user; who may know them hears realm_user alone', async (t) => {
  const w = await world(t);
  const viewers = [w.admin, w.other, w.guestPeer, w.guestDm, w.guestFar];
  const [admin, other, guestPeer, guestDm, guestFar] = await act(t, w, viewers, () => w.s.api('DELETE', `/users/${w.subject.id}`, w.admin));
  const bot = ['subscription/peer_remove lobby subjectBot', 'realm_user/update subjectBot is_active=false'];
  const user = ['subscription/peer_remove lobby subject', 'realm_user/update subject is_active=false'];
  t.same(admin, [...bot, 'realm_bot/update subjectBot is_active=false', ...user], 'the acting administrator administers the bot');
  t.same(other, [...bot, ...user], 'another member');
  t.same(guestPeer, [
    ...bot,
    'subscription/peer_remove lobby subject',
    'user_group/remove_members role:fullmembers subject',
    'user_group/remove_members role:members subject',
    'user_group/remove_members team subject',
    'realm_user/remove subject full_name=Unknown user',
  ], 'a guest who knew the user through a channel alone loses them, and their groups');
  t.same(guestDm, ['realm_user/update subjectBot is_active=false', 'realm_user/update subject is_active=false'], 'a direct message partner keeps knowing them');
  t.same(guestFar, [
    'realm_user/update subjectBot is_active=false',
    'user_group/remove_members role:fullmembers subject',
    'user_group/remove_members role:members subject',
    'user_group/remove_members team subject',
  ], 'a guest who never knew the user: their groups alone; every bot is known to all');

  const [adminBack, otherBack, peerBack, dmBack, farBack] = await act(t, w, viewers, () => w.s.api('POST', `/users/${w.subject.id}/reactivate`, w.admin));
  const groups = ['user_group/add_members role:fullmembers subject', 'user_group/add_members role:members subject', 'user_group/add_members team subject'];
  const back = ['realm_user/update subject is_active=true', 'subscription/peer_add lobby subject', ...groups];
  t.same(adminBack, back, 'the bot stays deactivated');
  t.same(otherBack, back);
  t.same(peerBack, ['realm_user/add subject', 'subscription/peer_add lobby subject', ...groups], 'the guest gets the whole user back');
  t.same(dmBack, ['realm_user/update subject is_active=true', ...groups]);
  t.same(farBack, groups);
});

t.test('reactivating a bot whose owner is gone: the reactivating administrator becomes its owner', async (t) => {
  const w = await world(t);
  t.equal((await w.s.api('DELETE', `/users/${w.subject.id}`, w.admin)).status, 200);
  const viewers = [w.admin, w.other, w.guestPeer, w.guestFar];
  const [admin, other, guestPeer, guestFar] = await act(t, w, viewers, () => w.s.api('POST', `/users/${w.subjectBot.id}/reactivate`, w.admin));
  const groups = ['user_group/add_members role:fullmembers subjectBot', 'user_group/add_members role:members subjectBot'];
  t.same(admin, [
    'realm_user/update subjectBot is_active=true',
    'realm_bot/update subjectBot is_active=true',
    'realm_bot/update subjectBot owner_id=admin',
    'realm_user/update subjectBot bot_owner_id=admin',
    'subscription/peer_add lobby subjectBot',
    ...groups,
  ], 'as test_do_reactivate_user');
  t.same(other, ['realm_user/update subjectBot is_active=true', 'realm_user/update subjectBot bot_owner_id=admin', 'subscription/peer_add lobby subjectBot', ...groups]);
  t.same(guestPeer, other, 'every bot is known to all');
  t.same(guestFar, [other[0], other[1], ...groups]);
});

t.test("a bot's new owner: realm_bot delete, add or update, then realm_user", async (t) => {
  const w = await world(t);
  const viewers = [w.admin, w.other, w.subject, w.guestFar];
  const [admin, other, subject, guestFar] = await act(t, w, viewers, () => w.s.api('PATCH', `/bots/${w.otherBot.id}`, w.admin, { bot_owner_id: w.subject.id }));
  const person = 'realm_user/update otherBot bot_owner_id=subject';
  t.same(admin, ['realm_bot/update otherBot owner_id=subject', person], 'an administrator keeps the bot');
  t.same(other, ['realm_bot/delete otherBot', person], 'the former owner loses it');
  t.same(subject, ['realm_bot/add otherBot', person], 'the new owner gains it');
  t.same(guestFar, [person]);

  // A bot whose owner changes role is the same bot: no realm_bot event, as on the real server.
  const [adminAgain, subjectAgain] = await act(t, w, [w.admin, w.subject], setRole(w, Role.MODERATOR));
  t.notOk([...adminAgain, ...subjectAgain].some((line) => line.startsWith('realm_bot')));
});

t.test('deactivating a bot alone', async (t) => {
  const w = await world(t);
  const viewers = [w.admin, w.subject, w.other, w.guestFar];
  const [admin, subject, other, guestFar] = await act(t, w, viewers, () => w.s.api('DELETE', `/bots/${w.subjectBot.id}`, w.subject));
  const events = ['subscription/peer_remove lobby subjectBot', 'realm_user/update subjectBot is_active=false'];
  t.same(admin, [...events, 'realm_bot/update subjectBot is_active=false'], 'as test_do_deactivate_bot');
  t.same(subject, [...events, 'realm_bot/update subjectBot is_active=false'], 'its owner');
  t.same(other, events);
  t.same(guestFar, ['realm_user/update subjectBot is_active=false']);
});

t.test('a limited guest with the user_list_incomplete capability drops the user it loses, and gets it back', async (t) => {
  const w = await world(t);
  const incomplete = { ...register, client_capabilities: JSON.stringify({ user_list_incomplete: true }) };
  const [gone] = await act(t, w, [w.guestPeer], () => w.s.api('DELETE', `/users/${w.subject.id}`, w.admin), incomplete);
  t.equal(gone.at(-1), 'realm_user/remove subject full_name=Unknown user');
  const [back] = await act(t, w, [w.guestPeer], () => w.s.api('POST', `/users/${w.subject.id}/reactivate`, w.admin), incomplete);
  t.equal(back[0], 'realm_user/add subject');
});
