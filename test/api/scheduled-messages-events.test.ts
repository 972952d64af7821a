import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, unsubscribe } from '../helpers/channels-fixture.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

t.test('scheduled_messages events keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, bob, 'events-private', [alice], { invite_only: true });
  const register = { event_types: ['scheduled_messages'], fetch_event_types: ['scheduled_messages'] };
  const at = nowSeconds() + 120;

  let id = 0;
  const added = await verifyAction(t, s, alice, async () => {
    const r = await s.api('POST', '/scheduled_messages', alice, { type: 'direct', to: [bob.id], content: 'one', scheduled_delivery_timestamp: at });
    id = r.body.scheduled_message_id;
  }, { register });
  t.same(added.map(({ id: _id, ...e }) => e), [{
    type: 'scheduled_messages',
    op: 'add',
    scheduled_messages: [{ scheduled_message_id: id, type: 'private', to: [bob.id], content: 'one', rendered_content: '<p>one</p>', scheduled_delivery_timestamp: at, failed: false }],
  }]);

  const updated = await verifyAction(t, s, alice, () =>
    s.api('PATCH', `/scheduled_messages/${id}`, alice, { type: 'stream', to: sid, topic: 'plans', content: '**two**' }), { register });
  t.same(updated.map(({ id: _id, ...e }) => e), [{
    type: 'scheduled_messages',
    op: 'update',
    scheduled_message: { scheduled_message_id: id, type: 'stream', to: sid, topic: 'plans', content: '**two**', rendered_content: '<p><strong>two</strong></p>', scheduled_delivery_timestamp: at, failed: false },
  }]);

  // Others get nothing of it.
  const other = await verifyAction(t, s, bob, () => s.api('PATCH', `/scheduled_messages/${id}`, alice, { content: 'three' }), { register });
  t.same(other, []);

  // A failed send: update with failed: true.
  await unsubscribe(s, alice, 'events-private', [alice]);
  const failed = await verifyAction(t, s, alice, () => s.scheduler.runOnce(new Date((at + 1) * 1000)), { register });
  t.match(failed, [{ type: 'scheduled_messages', op: 'update', scheduled_message: { scheduled_message_id: id, failed: true, content: 'three' } }]);
  t.equal(failed.length, 1);

  // Rescheduled: update with failed: false; delivered: remove.
  const again = nowSeconds() + 300;
  const rescheduled = await verifyAction(t, s, alice, async () => {
    await s.api('PATCH', `/scheduled_messages/${id}`, alice, { type: 'direct', to: [bob.id], scheduled_delivery_timestamp: again });
  }, { register });
  t.match(rescheduled, [{ op: 'update', scheduled_message: { scheduled_message_id: id, failed: false, type: 'private', scheduled_delivery_timestamp: again } }]);
  const delivered = await verifyAction(t, s, alice, () => s.scheduler.runOnce(new Date((again + 1) * 1000)), { register });
  t.same(delivered.map(({ id: _id, ...e }) => e), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }]);

  // Deleted: remove.
  let second = 0;
  await verifyAction(t, s, alice, async () => {
    second = (await s.api('POST', '/scheduled_messages', alice, { type: 'direct', to: [alice.id], content: 'note', scheduled_delivery_timestamp: at + 1000 })).body.scheduled_message_id;
  }, { register });
  const removed = await verifyAction(t, s, alice, () => s.api('DELETE', `/scheduled_messages/${second}`, alice), { register });
  t.same(removed.map(({ id: _id, ...e }) => e), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: second }]);
});

t.test('the delivered message reaches its recipients\' queues like any sent message', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const at = nowSeconds() + 60;
  const r = await s.api('POST', '/scheduled_messages', alice, { type: 'direct', to: [bob.id], content: 'for bob', scheduled_delivery_timestamp: at });
  t.equal(r.status, 200);
  const register = { event_types: ['message', 'scheduled_messages'], fetch_event_types: ['message', 'scheduled_messages'], apply_markdown: true };
  const bobQueue = (await s.api('POST', '/register', bob, register)).body;
  const events = await verifyAction(t, s, alice, () => s.scheduler.runOnce(new Date((at + 1) * 1000)), { register });
  t.match(events, [
    { type: 'message', message: { sender_id: alice.id, content: '<p>for bob</p>', type: 'private', client: 'ZulipMobile' }, flags: ['read'] },
    { type: 'scheduled_messages', op: 'remove' },
  ], 'the sender gets the message and the removal');
  t.notOk('local_message_id' in events[0]!, 'no client of the sender sent it: nothing to match against a local echo');
  const bobs = (await s.api('GET', '/events', bob, { queue_id: bobQueue.queue_id, last_event_id: bobQueue.last_event_id, dont_block: true })).body.events;
  t.match(bobs, [{ type: 'message', message: { sender_id: alice.id, content: '<p>for bob</p>' }, flags: [] }]);
  t.equal(bobs.length, 1, 'the recipient gets only the message');
});

t.test('a scheduled message due after its organization was deactivated fails, with no notice', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const at = Math.floor(Date.now() / 1000) + 120;
  const created = await s.api('POST', '/scheduled_messages', alice, { type: 'direct', to: [bob.id], content: 'later', scheduled_delivery_timestamp: at });
  t.equal(created.status, 200);
  t.equal((await s.api('POST', '/realm/deactivate', s.owner)).status, 200);
  await s.scheduler.runOnce(new Date((at + 1) * 1000));
  const row = await s.platform.db.selectFrom('scheduled_messages').selectAll().where('id', '=', created.body.scheduled_message_id).executeTakeFirstOrThrow();
  t.match(row, { failed: true, delivered: false, failure_message: 'This organization has been deactivated' });
  const sent = await s.platform.db.selectFrom('messages').select('content').where('content', '=', 'later').execute();
  t.same(sent, [], 'not delivered');
});
