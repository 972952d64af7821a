import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel } from '../helpers/typing-fixture.js';
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS } from '../../src/event-queue/areas/typing.js';

// POST /typing as the real server's typing tests exercise it: who hears of it, and in which
// order the request's problems are reported.

const shared = startTestServer(t);

const queue = async (s: TestServer, user: TestUser) => {
  const reg = await s.api('POST', '/register', user, { event_types: ['typing'], client_capabilities: { stream_typing_notifications: true } });
  let last = reg.body.last_event_id as number;
  return async () => {
    const res = await s.api('GET', '/events', user, { queue_id: reg.body.queue_id, last_event_id: last, dont_block: true });
    const events = (res.body.events as any[]).filter((e) => e.type !== 'heartbeat');
    if (events.length > 0) last = events[events.length - 1].id;
    return events.map(({ id: _id, ...e }) => e);
  };
};

t.test('a channel with more subscribers than the limit gets no typing notifications', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const others: TestUser[] = [];
  // Alice, Bob and the others: exactly the limit.
  for (let i = 0; i < MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS - 2; i++) others.push(await s.user(Role.MEMBER, `Member ${i}`));
  const channel = await createChannel(s, alice, 'crowded', { subscribers: [alice.id, bob.id, ...others.map((u) => u.id)] });
  const forBob = await queue(s, bob);
  const type = () => s.api('POST', '/typing', alice, { type: 'stream', op: 'start', stream_id: channel, topic: 'busy' });

  t.equal((await type()).status, 200);
  t.match(await forBob(), [{ type: 'typing', op: 'start', stream_id: channel, topic: 'busy' }], 'at the limit: delivered');

  const extra = await s.user(Role.MEMBER, 'One too many');
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'crowded' }], principals: [extra.id] });
  const over = await type();
  t.same(over.body, { result: 'success', msg: '' }, 'the request still succeeds');
  t.same(await forBob(), [], 'over the limit: nobody hears of it');

  // A deactivated subscriber does not count.
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  t.equal((await s.api('DELETE', `/users/${others[0]!.id}`, admin)).status, 200);
  await type();
  t.match(await forBob(), [{ type: 'typing', op: 'start' }], 'back at the limit once a subscriber is deactivated');
});

t.test('direct typing reaches active recipients only, and names everyone', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const gone = await s.user(Role.MEMBER, 'Gone');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const forAlice = await queue(s, alice);
  const forBob = await queue(s, bob);
  await s.api('DELETE', `/users/${gone.id}`, admin);
  t.equal((await s.api('POST', '/typing', alice, { op: 'stop', to: [bob.id, gone.id] })).status, 200);
  const expected = [{
    type: 'typing', op: 'stop', message_type: 'direct', sender: { user_id: alice.id, email: alice.email },
    recipients: [bob, gone, alice].map((u) => ({ user_id: u.id, email: u.email })),
  }];
  t.same(await forBob(), expected);
  t.same(await forAlice(), expected);
  t.equal((await s.api('POST', '/typing', alice, { op: 'stop', to: [alice.id] })).status, 200);
  t.match(await forAlice(), [{ op: 'stop', recipients: [{ user_id: alice.id, email: alice.email }] }], 'typing to oneself');
  t.same(await forBob(), []);
});

t.test('the order of the checks', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const secret = await createChannel(s, alice, 'typing-secret', { subscribers: [alice.id], invite_only: true });
  await s.api('PATCH', '/settings', outsider, { send_private_typing_notifications: false, send_stream_typing_notifications: false });
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ op: 'start', type: 'stream', topic: 't' }, 'Missing stream_id'],
    [{ op: 'start', type: 'stream', stream_id: secret }, 'Missing topic'],
    [{ op: 'start', type: 'stream', stream_id: secret, topic: 't' }, 'User has disabled typing notifications for stream messages'],
    [{ op: 'start' }, "Missing 'to' argument"],
    [{ op: 'start', to: [] }, "Empty 'to' list"],
    [{ op: 'start', to: [987654] }, 'User has disabled typing notifications for direct messages'],
  ];
  for (const [params, msg] of cases) {
    const res = await s.api('POST', '/typing', outsider, params);
    t.same([res.status, res.body.msg], [400, msg], JSON.stringify(params));
  }
  await s.api('PATCH', '/settings', outsider, { send_private_typing_notifications: true, send_stream_typing_notifications: true });
  t.equal((await s.api('POST', '/typing', outsider, { op: 'start', type: 'stream', stream_id: secret, topic: 't' })).body.msg, 'Invalid channel ID');
  t.equal((await s.api('POST', '/typing', outsider, { op: 'start', to: [987654] })).body.msg, 'Invalid user ID 987654');
});
