import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('realm_user events keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const register = { event_types: ['realm_user'], fetch_event_types: ['realm_user'] };

  const renamed = await verifyAction(t, s, member, () => s.api('PATCH', `/users/${member.id}`, admin, { full_name: 'Renamed Member' }), { register });
  t.match(renamed, [{ type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Renamed Member' } }]);

  await verifyAction(t, s, member, () => s.api('PATCH', `/users/${member.id}`, admin, { role: Role.MODERATOR }), {
    register,
    expect: (events) => t.match(events, [{ type: 'realm_user', op: 'update', person: { role: Role.MODERATOR } }]),
  });
  await verifyAction(t, s, admin, () => s.api('DELETE', `/users/${member.id}`, admin), {
    register,
    expect: (events) => t.match(events, [{ person: { user_id: member.id, is_active: false } }]),
  });
  await verifyAction(t, s, admin, () => s.api('POST', `/users/${member.id}/reactivate`, admin), { register });
  await verifyAction(t, s, member, () => s.api('POST', '/users', admin, { email: 'fresh@example.com', full_name: 'Fresh' }), {
    register,
    expect: (events) => t.match(events, [{ type: 'realm_user', op: 'add', person: { full_name: 'Fresh' } }]),
  });
});

t.test('event queue basics', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');

  const reg = await s.api('POST', '/register', member, { event_types: ['realm_user'], fetch_event_types: ['realm', 'realm_user'] });
  t.equal(reg.status, 200);
  t.type(reg.body.queue_id, 'string');
  t.type(reg.body.last_event_id, 'number');
  t.equal(reg.body.zulip_feature_level, 275);
  t.equal(reg.body.max_message_length, 10000);
  t.equal(reg.body.event_queue_longpoll_timeout_seconds, 90);

  // Someone else's queue, or an unknown one, is BAD_EVENT_QUEUE_ID.
  const foreign = await s.api('GET', '/events', other, { queue_id: reg.body.queue_id, dont_block: true });
  t.equal(foreign.status, 400);
  t.equal(foreign.body.code, 'BAD_EVENT_QUEUE_ID');
  t.equal(foreign.body.queue_id, reg.body.queue_id);

  // A blocked poll wakes when a relevant event is committed.
  const started = Date.now();
  const poll = s.api('GET', '/events', member, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id });
  await new Promise((r) => setTimeout(r, 200));
  await s.api('PATCH', `/users/${other.id}`, s.owner, { full_name: 'Woken' });
  const woken = await poll;
  t.equal(woken.status, 200);
  t.match(woken.body.events, [{ type: 'realm_user', person: { full_name: 'Woken' } }]);
  t.ok(Date.now() - started < 1900, 'woke before the heartbeat');

  // Nothing new: a heartbeat after HEARTBEAT_SECONDS (2 s in tests), with a larger id.
  const lastId = woken.body.events[0].id;
  const beat = await s.api('GET', '/events', member, { queue_id: reg.body.queue_id, last_event_id: lastId });
  t.match(beat.body.events, [{ type: 'heartbeat' }]);
  t.ok(beat.body.events[0].id > lastId, 'heartbeat id increases');
  const beat2 = await s.api('GET', '/events', member, { queue_id: reg.body.queue_id, last_event_id: beat.body.events[0].id });
  t.ok(beat2.body.events[0].id > beat.body.events[0].id, 'second heartbeat id increases too');

  // Event type filter: a queue for other types gets nothing for realm_user.
  const filtered = await s.api('POST', '/register', member, { event_types: ['message'] });
  await s.api('PATCH', `/users/${other.id}`, s.owner, { full_name: 'Unseen' });
  const none = await s.api('GET', '/events', member, { queue_id: filtered.body.queue_id, last_event_id: filtered.body.last_event_id, dont_block: true });
  t.same(none.body.events, []);

  const deleted = await s.api('DELETE', '/events', member, { queue_id: reg.body.queue_id });
  t.equal(deleted.status, 200);
  const gone = await s.api('GET', '/events', member, { queue_id: reg.body.queue_id, dont_block: true });
  t.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
});

t.test('idle queues expire', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const reg = await s.api('POST', '/register', member, {});
  t.equal(await s.queues.expireIdleQueues(Date.now() + 60_000), 0, 'a fresh queue stays');
  t.equal(await s.queues.expireIdleQueues(Date.now() + 11 * 60_000), 1, 'a queue idle for over 10 minutes goes');
  const gone = await s.api('GET', '/events', member, { queue_id: reg.body.queue_id, dont_block: true });
  t.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
});
