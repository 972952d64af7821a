import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';

t.test('PATCH /users/me/subscriptions/muted_topics maps onto the user_topic policy', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channel = await createChannel(s, alice, 'Lunch Room', { subscribers: [alice.id] });
  const secret = await createChannel(s, bob, 'secret', { subscribers: [bob.id], invite_only: true });
  const register = { event_types: ['user_topic'], fetch_event_types: ['user_topic'] };
  const policies = async (user = alice) => (await s.api('POST', '/register', user, register)).body.user_topics
    .map((u: any) => [u.stream_id, u.topic_name, u.visibility_policy]);

  const muted = await verifyAction(t, s, alice, () => s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, topic: 'pizza', op: 'add' }), { register });
  t.same(muted.map((e) => [e.type, e.stream_id, e.topic_name, e.visibility_policy]), [['user_topic', channel, 'pizza', 1]]);
  t.same(await policies(), [[channel, 'pizza', 1]]);
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, topic: 'pizza', op: 'add' })).status, 200,
    'muting a muted topic is no error (feature level 170)');
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream: 'lunch room', topic: 'salad', op: 'add' })).status, 200, 'by channel name');
  t.same((await policies()).sort(), [[channel, 'pizza', 1], [channel, 'salad', 1]].sort());

  await verifyAction(t, s, alice, () => s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, topic: 'pizza', op: 'remove' }), {
    register,
    expect: (events) => t.same(events.map((e) => e.visibility_policy), [0]),
  });
  t.same(await policies(), [[channel, 'salad', 1]]);
  await s.api('POST', '/user_topics', alice, { stream_id: channel, topic: 'followed', visibility_policy: 3 });
  await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, topic: 'followed', op: 'remove' });
  t.notOk((await policies()).some((p: any) => p[1] === 'followed'), 'remove clears any policy, as the real server');

  const both = await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, stream: 'Lunch Room', topic: 'x', op: 'add' });
  t.same(both.body, { result: 'error', msg: "Please choose one: 'stream' or 'stream_id'.", code: 'BAD_REQUEST' });
  const neither = await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { topic: 'x', op: 'add' });
  t.same(neither.body, { result: 'error', msg: "Please supply 'stream'.", code: 'BAD_REQUEST' });
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: secret, topic: 'x', op: 'add' })).body.msg, 'Invalid channel ID', 'a private channel');
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream: 'secret', topic: 'x', op: 'add' })).body.msg, "Invalid channel name 'secret'");
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: 999999, topic: 'x', op: 'remove' })).body.msg, 'Topic is not muted');
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, topic: 'x', op: 'toggle' })).status, 400);
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: channel, op: 'add' })).body.code, 'REQUEST_VARIABLE_MISSING');
  t.same(await policies(bob), [], "Bob's policies are his own");

  // A topic muted in a channel the user then loses can still be unmuted.
  await s.api('POST', '/users/me/subscriptions', bob, { subscriptions: [{ name: 'secret' }], principals: [alice.id] });
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: secret, topic: 'gone', op: 'add' })).status, 200);
  await s.api('DELETE', '/users/me/subscriptions', bob, { subscriptions: ['secret'], principals: [alice.id] });
  t.equal((await s.api('PATCH', '/users/me/subscriptions/muted_topics', alice, { stream_id: secret, topic: 'gone', op: 'remove' })).status, 200);
  t.notOk((await policies()).some((p: any) => p[1] === 'gone'));
});
