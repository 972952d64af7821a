import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';

const queue = async (s: TestServer, user: TestUser, capabilities: Record<string, boolean> = {}) => {
  const reg = await s.api('POST', '/register', user, { event_types: ['typing'], fetch_event_types: ['realm'], client_capabilities: capabilities });
  let last = reg.body.last_event_id as number;
  // Each call returns what arrived since the previous one.
  return async () => {
    const res = await s.api('GET', '/events', user, { queue_id: reg.body.queue_id, last_event_id: last, dont_block: true });
    const events = res.body.events as any[];
    if (events.length > 0) last = events[events.length - 1].id;
    return events.map(({ id: _id, ...e }) => e);
  };
};

t.test('direct-message typing notifications', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const forBob = await queue(s, bob);
  const forAlice = await queue(s, alice);
  const forCarol = await queue(s, carol);

  const start = await s.api('POST', '/typing', alice, { op: 'start', to: [bob.id] });
  t.equal(start.status, 200, JSON.stringify(start.body));
  t.same(start.body, { result: 'success', msg: '' });
  const expected = {
    type: 'typing', op: 'start', message_type: 'direct',
    sender: { user_id: alice.id, email: alice.email },
    recipients: [{ user_id: bob.id, email: bob.email }, { user_id: alice.id, email: alice.email }],
  };
  t.same(await forBob(), [expected]);
  t.same(await forAlice(), [expected], 'the sender is one of the recipients');
  t.same(await forCarol(), [], 'others get nothing');

  await s.api('POST', '/typing', alice, { type: 'direct', op: 'stop', to: [bob.id] });
  t.same((await forBob()).map((e) => e.op), ['stop']);

  const logged = await s.platform.db.selectFrom('events').select('type').where('stream_id', '=', `typing-${alice.id}`).orderBy('position').execute();
  t.same(logged.map((e) => e.type), ['TypingStarted', 'TypingStopped'], 'each notification is a domain event in the log');

  // The register-apply-compare test holds: typing events change no registered state.
  await verifyAction(t, s, bob, () => s.api('POST', '/typing', alice, { op: 'start', to: [bob.id] }), {
    register: { event_types: ['typing', 'realm_user'], fetch_event_types: ['realm_user'] },
    expect: (events) => t.match(events, [{ type: 'typing', op: 'start' }]),
  });
});

t.test('settings gate typing notifications', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await s.api('PATCH', '/settings', bob, { receives_typing_notifications: false });
  const forBob = await queue(s, bob);
  const forCarol = await queue(s, carol);
  const res = await s.api('POST', '/typing', alice, { op: 'start', to: [bob.id, carol.id] });
  t.equal(res.status, 200);
  t.same(await forBob(), [], 'Bob turned receiving off');
  t.match(await forCarol(), [{ type: 'typing', op: 'start', recipients: [{ user_id: bob.id }, { user_id: carol.id }, { user_id: alice.id }] }]);

  await s.api('PATCH', '/settings', alice, { send_private_typing_notifications: false, send_stream_typing_notifications: false });
  const refused = await s.api('POST', '/typing', alice, { op: 'start', to: [carol.id] });
  t.equal(refused.status, 400);
  t.equal(refused.body.msg, 'User has disabled typing notifications for direct messages');
  const channel = await createChannel(s, alice, 'general', { subscribers: [alice.id, carol.id] });
  const refusedChannel = await s.api('POST', '/typing', alice, { type: 'stream', op: 'start', stream_id: channel, topic: 'x' });
  t.equal(refusedChannel.body.msg, 'User has disabled typing notifications for stream messages');
  t.same(await forCarol(), [], 'nothing was sent');
});

t.test('channel typing notifications', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const dave = await s.user(Role.MEMBER, 'Dave');
  const channel = await createChannel(s, alice, 'engineering', { subscribers: [alice.id, bob.id, carol.id] });
  const forBob = await queue(s, bob, { stream_typing_notifications: true });
  const forCarol = await queue(s, carol);
  const forDave = await queue(s, dave, { stream_typing_notifications: true });

  const res = await s.api('POST', '/typing', alice, { type: 'stream', op: 'start', stream_id: channel, topic: 'deploys' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(await forBob(), [{
    type: 'typing', op: 'start', message_type: 'stream', sender: { user_id: alice.id, email: alice.email }, stream_id: channel, topic: 'deploys',
  }]);
  t.same(await forCarol(), [], 'clients without stream_typing_notifications get no channel typing');
  t.same(await forDave(), [], 'non-subscribers get nothing');

  const alias = await s.api('POST', '/typing', alice, { type: 'channel', op: 'stop', stream_id: channel, topic: 'deploys' });
  t.equal(alias.status, 200, '"channel" is accepted as a type');
  t.match(await forBob(), [{ op: 'stop', message_type: 'stream' }]);
});

t.test('who may send channel typing notifications', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const guest = await s.user(Role.GUEST, 'Guest');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const open = await createChannel(s, alice, 'open', { subscribers: [alice.id] });
  const secret = await createChannel(s, alice, 'secret', { subscribers: [alice.id], invite_only: true });
  const announce = await createChannel(s, admin, 'announce', { subscribers: [admin.id, alice.id], stream_post_policy: 2 });
  const guests = await createChannel(s, alice, 'with-guest', { subscribers: [alice.id, guest.id] });
  const type = (user: TestUser, stream_id: number) => s.api('POST', '/typing', user, { type: 'stream', op: 'start', stream_id, topic: 't' });

  t.equal((await type(guest, open)).body.msg, 'Invalid channel ID', 'a guest cannot type in a public channel they are not in');
  t.equal((await type(guest, guests)).status, 200, 'a guest can type in their own channel');
  t.equal((await type(outsider, secret)).body.msg, 'Invalid channel ID', 'an outsider cannot type in a private channel');
  t.equal((await type(admin, secret)).body.msg, 'Invalid channel ID', 'nor can an unsubscribed administrator');
  t.equal((await type(outsider, open)).status, 200, 'anyone but guests may post to a public channel');
  const announceRes = await type(alice, announce);
  t.equal(announceRes.status, 400);
  t.equal(announceRes.body.msg, 'Only organization administrators can send to this channel.');
  t.equal((await type(admin, announce)).status, 200);
  t.equal((await type(alice, 999999)).body.msg, 'Invalid channel ID');
});

t.test('request errors', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ to: [1] }, 'REQUEST_VARIABLE_MISSING', "Missing 'op' argument"],
    [{ op: 'typing', to: [1] }, 'BAD_REQUEST', 'Invalid op'],
    [{ op: 'start', type: 'private', to: [1] }, 'BAD_REQUEST', 'Invalid type'],
    [{ op: 'start' }, 'BAD_REQUEST', "Missing 'to' argument"],
    [{ op: 'start', to: [] }, 'BAD_REQUEST', "Empty 'to' list"],
    [{ op: 'start', to: [alice.id, 987654] }, 'BAD_REQUEST', 'Invalid user ID 987654'],
    [{ op: 'start', to: ['x'] }, 'BAD_REQUEST', 'to[0] is not an integer'],
    [{ op: 'start', type: 'stream', topic: 'x' }, 'BAD_REQUEST', 'Missing stream_id'],
    [{ op: 'start', type: 'stream', stream_id: 1 }, 'BAD_REQUEST', 'Missing topic'],
  ];
  for (const [params, code, msg] of cases) {
    const res = await s.api('POST', '/typing', alice, params);
    t.equal(res.status, 400, JSON.stringify(params));
    t.equal(res.body.code, code, JSON.stringify(params));
    t.equal(res.body.msg, msg, JSON.stringify(params));
  }
  t.equal((await s.api('POST', '/typing', null, { op: 'start', to: [1] })).status, 401);
});

t.test('a stale typing notification is not delivered', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const forBob = await queue(s, bob);
  const append = (secondsAgo: number, op: 'TypingStarted' | 'TypingStopped') => {
    const time = new Date(Date.now() - secondsAgo * 1000).toISOString();
    return s.platform.commands.run({ actor_id: alice.id, realm_id: 1, client: 'test', request_id: randomUUID(), time }, async () => ({
      appends: [{
        streamId: `typing-${alice.id}`,
        expectedVersion: undefined,
        events: [{ type: op, data: { sender_id: alice.id, realm_id: 1, message_type: 'direct', recipient_ids: [bob.id, alice.id], stream_id: null, topic: null } }],
      }],
      result: undefined,
    }));
  };
  // A notification typed 20 s ago is in the log, but a client polling now must not see a start.
  await append(20, 'TypingStarted');
  await append(16, 'TypingStopped');
  t.same(await forBob(), [], 'stale notifications are skipped');
  await append(3, 'TypingStarted');
  t.match(await forBob(), [{ type: 'typing', op: 'start', sender: { user_id: alice.id } }], 'a fresh one is delivered');
});
