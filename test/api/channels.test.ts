import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';

async function create(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}) {
  const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name, description: extra.description ?? '' }], ...extra, description: undefined });
  return res;
}

async function streamId(s: TestServer, as: TestUser, name: string): Promise<number> {
  const res = await s.api('GET', '/get_stream_id', as, { stream: name });
  return res.body.stream_id;
}

t.test('creating channels and subscribing', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');

  const res = await create(s, member, 'Verona', { description: 'Italian **city**' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(res.body.subscribed, { [member.email]: ['Verona'] });
  t.same(res.body.already_subscribed, {});

  const id = await streamId(s, member, 'verona');
  t.type(id, 'number');
  const got = await s.api('GET', `/streams/${id}`, other);
  t.equal(got.status, 200);
  t.match(got.body.stream, {
    stream_id: id,
    name: 'Verona',
    description: 'Italian **city**',
    rendered_description: '<p>Italian <strong>city</strong></p>',
    creator_id: member.id,
    invite_only: false,
    is_web_public: false,
    history_public_to_subscribers: true,
    stream_post_policy: 1,
    is_announcement_only: false,
    message_retention_days: null,
    first_message_id: null,
    stream_weekly_traffic: null,
  });
  t.type(got.body.stream.date_created, 'number');
  t.type(got.body.stream.can_remove_subscribers_group, 'number');

  const again = await create(s, member, 'Verona');
  t.same(again.body.already_subscribed, { [member.email]: ['Verona'] });
  t.same(again.body.subscribed, {});

  // Subscribing someone else by id; the response names them by API email.
  const sub = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'Verona' }], principals: [other.id] });
  t.same(sub.body.subscribed, { [other.email]: ['Verona'] });

  const members = await s.api('GET', `/streams/${id}/members`, other);
  t.same(members.body.subscribers, [member.id, other.id].sort((a, b) => a - b));

  const mine = await s.api('GET', '/users/me/subscriptions', other, { include_subscribers: true });
  t.equal(mine.body.subscriptions.length, 1);
  t.match(mine.body.subscriptions[0], { stream_id: id, name: 'Verona', is_muted: false, in_home_view: true, pin_to_top: false, desktop_notifications: null });
  t.match(mine.body.subscriptions[0].color, /^#[0-9a-f]{6}$/);
  t.same(mine.body.subscriptions[0].subscribers, [member.id, other.id].sort((a, b) => a - b));
  const noSubs = await s.api('GET', '/users/me/subscriptions', other);
  t.notOk('subscribers' in noSubs.body.subscriptions[0]);

  // Subscription status of another user.
  t.same((await s.api('GET', `/users/${other.id}/subscriptions/${id}`, member)).body.is_subscribed, true);
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  t.same((await s.api('GET', `/users/${outsider.id}/subscriptions/${id}`, member)).body.is_subscribed, false);
  t.equal((await s.api('GET', `/users/999999/subscriptions/${id}`, member)).body.msg, 'No such user');
  t.equal((await s.api('GET', `/users/${other.id}/subscriptions/999999`, member)).body.msg, 'Invalid channel ID');

  // Principals may be API email addresses.
  const byEmail = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'Verona' }], principals: [outsider.email] });
  t.same(byEmail.body.subscribed, { [outsider.email]: ['Verona'] });
  await s.api('DELETE', '/users/me/subscriptions', outsider, { subscriptions: ['Verona'] });

  // Unknown principal.
  const bad = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'Verona' }], principals: [999999] });
  t.equal(bad.status, 400);
  t.equal(bad.body.msg, 'No such user');

  // Names are validated.
  const empty = await create(s, member, '   ');
  t.equal(empty.body.msg, "Channel name can't be empty.");
  const long = await create(s, member, 'x'.repeat(61));
  t.equal(long.body.msg, 'Channel name too long (limit: 60 characters).');
  const ctrl = await create(s, member, 'a\u0001b');
  t.equal(ctrl.body.msg, 'Invalid character in channel name, at position 2.');
  // NUL characters nested in JSON parameters are refused, not stored.
  const nulDesc = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'nul', description: 'a\u0000b' }] });
  t.equal(nulDesc.body.msg, 'description contains NULL (0x00) characters.');
  const nulName = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'a\u0000b' }] });
  t.equal(nulName.status, 400);
  const nulPrincipal = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'Verona' }], principals: ['x\u0000@example.com'] });
  t.equal(nulPrincipal.status, 400);
  const nulLeave = await s.api('DELETE', '/users/me/subscriptions', member, { subscriptions: ['a\u0000b'] });
  t.equal(nulLeave.status, 400);
  const missing = await s.api('POST', '/users/me/subscriptions', member, {});
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  const notJson = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: 'nope' });
  t.equal(notJson.status, 400);

  // Unsubscribing.
  const un = await s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: ['Verona'] });
  t.same(un.body, { result: 'success', msg: '', removed: ['Verona'], not_removed: [] });
  const un2 = await s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: ['Verona'] });
  t.same(un2.body.not_removed, ['Verona']);
  const unknown = await s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: ['Nowhere', 'Verona', 'Elsewhere'] });
  t.same(unknown.body, { result: 'error', msg: 'Channel(s) (Nowhere, Elsewhere) do not exist', code: 'BAD_REQUEST' });

  // PATCH adds and removes in one call.
  const both = await s.api('PATCH', '/users/me/subscriptions', other, { add: [{ name: 'Padua' }], delete: ['Verona'] });
  t.match(both.body, { subscribed: { [other.email]: ['Padua'] }, already_subscribed: {}, removed: [], not_removed: ['Verona'] });
  const nothing = await s.api('PATCH', '/users/me/subscriptions', other, {});
  t.equal(nothing.body.msg, 'Nothing to do. Specify at least one of "add" or "delete".');

  // Resubscribing keeps the earlier colour.
  const before = mine.body.subscriptions[0].color;
  await create(s, other, 'Verona');
  const after = await s.api('GET', '/users/me/subscriptions', other);
  t.equal(after.body.subscriptions.find((x: any) => x.name === 'Verona').color, before);
});

t.test('private channels are hidden from those outside them', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const guest = await s.user(Role.GUEST, 'Guest');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');

  const res = await create(s, member, 'secret', { invite_only: true });
  t.equal(res.status, 200);
  const id = await streamId(s, member, 'secret');
  const got = await s.api('GET', `/streams/${id}`, member);
  t.equal(got.body.stream.invite_only, true);
  t.equal(got.body.stream.history_public_to_subscribers, false, 'private history is protected by default');

  for (const who of [outsider, guest]) {
    const byId = await s.api('GET', `/streams/${id}`, who);
    t.equal(byId.body.msg, 'Invalid channel ID');
    const byName = await s.api('GET', '/get_stream_id', who, { stream: 'secret' });
    t.equal(byName.body.msg, "Invalid channel name 'secret'");
    const members = await s.api('GET', `/streams/${id}/members`, who);
    t.equal(members.body.msg, 'Invalid channel ID');
    const topics = await s.api('GET', `/users/me/${id}/topics`, who);
    t.equal(topics.body.msg, 'Invalid channel ID');
    const list = await s.api('GET', '/streams', who);
    t.notOk(list.body.streams.some((x: any) => x.stream_id === id));
    const join = await create(s, who, 'secret');
    t.equal(join.body.msg, who === guest ? 'Not allowed for guest users' : 'Unable to access channel (secret).');
    if (who === outsider) {
      const soft = await s.api('POST', '/users/me/subscriptions', who, { subscriptions: [{ name: 'secret' }], authorization_errors_fatal: false });
      t.same(soft.body.unauthorized, ['secret']);
      t.same(soft.body.subscribed, {});
    }
    const leave = await s.api('DELETE', '/users/me/subscriptions', who, { subscriptions: ['secret'] });
    t.equal(leave.body.msg, 'Channel(s) (secret) do not exist');
  }
  // Administrators see the channel and its members, but not its content.
  const adminView = await s.api('GET', `/streams/${id}`, admin);
  t.equal(adminView.body.stream.name, 'secret');
  const adminMembers = await s.api('GET', `/streams/${id}/members`, admin);
  t.same(adminMembers.body.subscribers, [member.id]);
  const adminTopics = await s.api('GET', `/users/me/${id}/topics`, admin);
  t.equal(adminTopics.body.msg, 'Invalid channel ID');
  const all = await s.api('GET', '/streams', admin, { include_all_active: true });
  t.ok(all.body.streams.some((x: any) => x.stream_id === id));

  // A subscriber adds the outsider, who then sees it.
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'secret' }], principals: [outsider.id] });
  const now = await s.api('GET', `/streams/${id}/members`, outsider);
  t.same(now.body.subscribers, [member.id, outsider.id].sort((a, b) => a - b));
  const topics = await s.api('GET', `/users/me/${id}/topics`, outsider);
  t.same(topics.body.topics, []);
});

t.test('guests see only their channels', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const guest = await s.user(Role.GUEST, 'Guest');
  await create(s, member, 'public');
  const id = await streamId(s, member, 'public');
  const list = await s.api('GET', '/streams', guest);
  t.same(list.body.streams, []);
  t.equal((await s.api('GET', `/streams/${id}`, guest)).body.msg, 'Invalid channel ID');
  // Guests do not subscribe themselves, to existing channels or new ones.
  t.equal((await create(s, guest, 'public')).body.msg, 'Not allowed for guest users');
  t.equal((await create(s, guest, 'newone')).body.msg, 'Not allowed for guest users');
  // Once subscribed by a member, the guest sees it and its members.
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'public' }], principals: [guest.id] });
  const after = await s.api('GET', '/streams', guest);
  t.same(after.body.streams.map((x: any) => x.stream_id), [id]);
  t.same((await s.api('GET', `/streams/${id}/members`, guest)).body.subscribers, [member.id, guest.id].sort((a, b) => a - b));
  // Guests cannot add others.
  const other = await s.user(Role.MEMBER, 'Other');
  const add = await s.api('POST', '/users/me/subscriptions', guest, { subscriptions: [{ name: 'public' }], principals: [other.id] });
  t.equal(add.body.msg, 'Not allowed for guest users');
});

t.test('GET /streams flags', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await create(s, admin, 'alpha', { is_default_stream: true });
  await create(s, admin, 'beta');
  await create(s, admin, 'hidden', { invite_only: true });
  await create(s, member, 'mine');
  const ids = async (as: TestUser, params: Record<string, unknown> = {}) =>
    (await s.api('GET', '/streams', as, params)).body.streams.map((x: any) => x.name).sort();

  t.same(await ids(member), ['alpha', 'beta', 'mine']);
  t.same(await ids(member, { include_public: false }), ['mine']);
  t.same(await ids(member, { include_public: false, include_subscribed: false }), []);
  t.same(await ids(member, { include_public: false, include_subscribed: false, include_default: true }), ['alpha']);
  const denied = await s.api('GET', '/streams', member, { include_all_active: true });
  t.equal(denied.status, 400);
  t.equal(denied.body.msg, 'User not authorized for this query');
  t.same(await ids(admin, { include_all_active: true }), ['alpha', 'beta', 'hidden', 'mine']);
  t.same(await ids(admin), ['alpha', 'beta', 'hidden', 'mine'], 'public channels and the private one they created');

  const withDefault = await s.api('GET', '/streams', member, { include_default: true });
  const alpha = withDefault.body.streams.find((x: any) => x.name === 'alpha');
  t.equal(alpha.is_default, true);
  t.equal(withDefault.body.streams.find((x: any) => x.name === 'beta').is_default, false);
  t.notOk('is_default' in (await s.api('GET', '/streams', member)).body.streams[0]);

  // A bot sees its owner's subscriptions with include_owner_subscribed.
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: member.id });
  t.same(await ids(bot, { include_public: false, include_owner_subscribed: true }), ['mine']);
  t.same(await ids(bot, { include_public: false }), []);

  const weird = await s.api('GET', '/streams', member, { include_public: 'maybe' });
  t.equal(weird.status, 400);
});
