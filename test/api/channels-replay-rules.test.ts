import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';

/** Who may subscribe, unsubscribe and edit, and what each refusal says, as on the real server. */

async function idOf(s: TestServer, as: TestUser, name: string): Promise<number> {
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

function subscribe(s: TestServer, as: TestUser, names: string[], extra: Record<string, unknown> = {}) {
  return s.api('POST', '/users/me/subscriptions', as, { subscriptions: names.map((name) => ({ name })), ...extra });
}

async function groupId(s: TestServer, name: string): Promise<number> {
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  return groups.find((g) => g.name === name)!.id;
}

t.test('subscribing: guests, default channels, colours, principals', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const guest = await s.user(Role.GUEST, 'Guest');
  const gone = await s.user(Role.MEMBER, 'Gone');
  await subscribe(s, member, ['lobby']);

  // Guests never subscribe themselves; others may add them.
  for (const names of [['lobby'], ['brand-new']]) {
    t.same((await subscribe(s, guest, names)).body, { result: 'error', msg: 'Not allowed for guest users', code: 'BAD_REQUEST' });
  }
  t.same((await subscribe(s, member, ['lobby'], { principals: [guest.id] })).body.subscribed, { [guest.email]: ['lobby'] });

  // is_default_stream only matters, and is only refused, when the request creates a channel.
  const existing = await subscribe(s, member, ['lobby'], { is_default_stream: true });
  t.equal(existing.status, 200);
  t.same(existing.body.already_subscribed, { [member.email]: ['lobby'] });
  t.equal((await subscribe(s, member, ['fresh'], { is_default_stream: true })).body.msg, 'Insufficient permission');
  t.equal((await subscribe(s, s.owner, ['fresh-private'], { is_default_stream: true, invite_only: true })).body.msg, 'A default channel cannot be private.');

  // A subscription may be given its colour.
  t.equal((await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'painted', color: '#123abc' }] })).status, 200);
  const subs = (await s.api('GET', '/users/me/subscriptions', member)).body.subscriptions as Array<{ name: string; color: string }>;
  t.equal(subs.find((x) => x.name === 'painted')!.color, '#123abc');
  const badColour = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'x', color: '#0g0g0g' }] });
  t.equal(badColour.body.msg, 'subscriptions[0]["color"] is not a valid hex color code');
  t.equal((await s.api('PATCH', '/users/me/subscriptions', member, { add: [{ bogus: 'x' }] })).body.msg, 'name key is missing from add[0]');
  t.equal((await s.api('PATCH', '/users/me/subscriptions', member, { add: [{ name: {} }] })).body.msg, 'add[0]["name"] is not a string');

  // A realm_default retention period is no choice of period: anyone may pass it.
  t.equal((await subscribe(s, member, ['kept'], { message_retention_days: 'realm_default' })).status, 200);
  t.equal((await subscribe(s, member, ['kept-10'], { message_retention_days: 10 })).body.msg, 'Must be an organization owner');

  // Principals: unknown and deactivated users are told apart.
  t.equal((await subscribe(s, member, ['lobby'], { principals: [999999] })).body.msg, 'No such user');
  await s.api('DELETE', `/users/${gone.id}`, s.owner);
  t.same((await subscribe(s, member, ['lobby'], { principals: [gone.id] })).body, { result: 'error', msg: 'User is deactivated', code: 'BAD_REQUEST' });
});

t.test('channel names are checked in code points, wherever they are given', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  t.equal((await subscribe(s, member, ['new\ufffestream'])).body.msg, 'Invalid character in channel name, at position 4.', 'unassigned code point');
  t.equal((await subscribe(s, member, ['\u{1F600}\u0001'])).body.msg, 'Invalid character in channel name, at position 2.', 'an emoji is one character');
  t.equal((await subscribe(s, member, ['\u{1F600}'.repeat(60)])).status, 200, 'sixty emoji are sixty characters');
  // Names to leave are validated like names to join.
  const leave = (name: string) => s.api('PATCH', '/users/me/subscriptions', member, { delete: [name] });
  t.equal((await leave('')).body.msg, "Channel name can't be empty.");
  t.equal((await leave('a'.repeat(61))).body.msg, 'Channel name too long (limit: 60 characters).');
  t.equal((await leave('abc\u0000')).body.msg, 'Invalid character in channel name, at position 4.');
  // Every unknown name is listed in one error.
  const unknown = await s.api('DELETE', '/users/me/subscriptions', member, { subscriptions: ['nowhere', '\u{1F600}'.repeat(60), 'elsewhere'] });
  t.same(unknown.body, { result: 'error', msg: 'Channel(s) (nowhere, elsewhere) do not exist', code: 'BAD_REQUEST' });
});

t.test('unsubscribing others', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await subscribe(s, member, ['room'], { principals: [member.id, other.id] });
  const remove = (as: TestUser) => s.api('DELETE', '/users/me/subscriptions', as, { subscriptions: ['room'], principals: [other.id] });
  t.same((await remove(member)).body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
  t.same((await remove(admin)).body.removed, ['room']);
  t.same((await remove(admin)).body.not_removed, ['room']);
});

t.test('PATCH /streams and DELETE /streams refusals', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  await subscribe(s, admin, ['first', 'Denmark']);
  const id = await idOf(s, admin, 'first');
  const patch = (params: Record<string, unknown>) => s.api('PATCH', `/streams/${id}`, admin, params);
  t.equal((await patch({ new_name: 'first' })).body.msg, 'Channel already has that name.');
  t.equal((await patch({ new_name: 'Denmark' })).body.msg, 'Channel name already in use.');
  t.equal((await patch({ new_name: 'denmark ' })).body.msg, 'Channel name already in use.', 'case and spaces do not make another name');
  t.equal((await patch({ new_name: 'test\ufffeame' })).body.msg, 'Invalid character in channel name, at position 5.');
  t.equal((await patch({ new_name: 'FIRST' })).status, 200, 'a change of case only');

  // A private channel the administrator is not in: an unchanged group setting needs no access.
  await subscribe(s, member, ['hidden'], { invite_only: true });
  const hidden = (await s.api('GET', '/streams', admin, { include_all_active: true })).body.streams.find((c: { name: string }) => c.name === 'hidden');
  const admins = await groupId(s, 'role:administrators');
  t.equal(hidden.can_remove_subscribers_group, admins);
  t.equal((await s.api('PATCH', `/streams/${hidden.stream_id}`, admin, { can_remove_subscribers_group: admins })).status, 200);
  t.equal((await s.api('PATCH', `/streams/${hidden.stream_id}`, admin, { can_remove_subscribers_group: await groupId(s, 'role:members') })).body.msg, 'Invalid channel ID');
  // Only someone in a private channel learns it cannot be a default channel.
  t.equal((await s.api('POST', '/default_streams', admin, { stream_id: hidden.stream_id })).body.msg, 'Invalid channel ID');
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'hidden' }], principals: [admin.id] });
  t.equal((await s.api('POST', '/default_streams', admin, { stream_id: hidden.stream_id })).body.msg, 'Private channels cannot be made default.');

  // Archiving twice: an administrator is told; anyone else learns nothing.
  t.equal((await s.api('DELETE', `/streams/${id}`, admin)).status, 200);
  t.same((await s.api('DELETE', `/streams/${id}`, admin)).body, { result: 'error', msg: 'Channel is already deactivated', code: 'BAD_REQUEST' });
  t.equal((await s.api('DELETE', `/streams/${id}`, member)).body.msg, 'Invalid channel ID');
});

t.test('subscription properties: what is wrong is said in the real server\'s order', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await subscribe(s, member, ['mine']);
  const id = await idOf(s, member, 'mine');
  const set = (data: unknown) => s.api('POST', '/users/me/subscriptions/properties', member, { subscription_data: data });
  t.equal((await set([{ property: 'bogus', stream_id: 999999, value: true }])).body.msg, 'Unknown subscription property: bogus', 'before the channel is looked up');
  t.equal((await set([{ property: 'color', value: '#ffffff' }])).body.msg, 'stream_id key is missing from subscription_data[0]');
  t.equal((await set([{ property: 'color', stream_id: id }])).body.msg, 'value key is missing from subscription_data[0]');
  t.equal((await set([{ property: 'color', stream_id: id, value: false }])).body.msg, 'color is not a string');
  t.equal((await set([{ property: 'color', stream_id: id, value: '3ffrff' }])).body.msg, 'color is not a valid hex color code');
  t.equal((await set([{ property: 'is_muted', stream_id: id, value: 'bad' }])).body.msg, 'is_muted is not a boolean');
  t.equal((await set([{ property: 'color', stream_id: id, value: '#c2c2c2' }])).status, 200);
});

t.test('leaving a channel, or its archiving, marks its messages read', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  await subscribe(s, member, ['left', 'archived', 'kept'], { principals: [member.id, other.id] });
  for (const to of ['left', 'archived', 'kept']) await s.api('POST', '/messages', other, { type: 'stream', to, topic: 't', content: `in ${to}` });
  const unread = async () => {
    const state = (await s.api('POST', '/register', member, { fetch_event_types: ['message', 'update_message_flags'] })).body;
    return (state.unread_msgs.streams as Array<{ stream_id: number }>).map((x) => x.stream_id).sort((a, b) => a - b);
  };
  const [left, archived, kept] = [await idOf(s, member, 'left'), await idOf(s, member, 'archived'), await idOf(s, member, 'kept')];
  t.same(await unread(), [left, archived, kept].sort((a, b) => a - b));

  const queue = (await s.api('POST', '/register', member, { event_types: ['update_message_flags'] })).body;
  await s.api('DELETE', '/users/me/subscriptions', member, { subscriptions: ['left'] });
  const events = (await s.api('GET', '/events', member, { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).body.events;
  t.match(events, [{ type: 'update_message_flags', op: 'add', flag: 'read', all: false }], 'the user is told');
  // Coming back does not make them unread again.
  await subscribe(s, member, ['left']);
  t.same(await unread(), [archived, kept].sort((a, b) => a - b));

  t.equal((await s.api('DELETE', `/streams/${archived}`, s.owner)).status, 200);
  t.same(await unread(), [kept]);
});
