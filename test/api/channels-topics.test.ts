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

t.test('subscription properties', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await create(s, member, 'props');
  const id = await streamId(s, member, 'props');
  const set = (data: unknown) => s.api('POST', '/users/me/subscriptions/properties', member, { subscription_data: data });
  const ok = await set([
    { stream_id: id, property: 'color', value: '#123abc' },
    { stream_id: id, property: 'pin_to_top', value: true },
    { stream_id: id, property: 'desktop_notifications', value: false },
    { stream_id: id, property: 'email_notifications', value: true },
    { stream_id: id, property: 'is_muted', value: true },
  ]);
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  const sub = (await s.api('GET', '/users/me/subscriptions', member)).body.subscriptions[0];
  t.match(sub, { color: '#123abc', pin_to_top: true, desktop_notifications: false, email_notifications: true, is_muted: true, in_home_view: false });
  await set([{ stream_id: id, property: 'in_home_view', value: true }]);
  t.equal((await s.api('GET', '/users/me/subscriptions', member)).body.subscriptions[0].is_muted, false);
  const patch = await s.api('PATCH', '/users/me/subscriptions/properties', member, { subscription_data: [{ stream_id: id, property: 'pin_to_top', value: false }] });
  t.equal(patch.status, 200);

  t.equal((await set([{ stream_id: id, property: 'color', value: 'red' }])).body.msg, 'color is not a valid hex color code');
  t.equal((await set([{ stream_id: id, property: 'pin_to_top', value: 'yes' }])).body.msg, 'pin_to_top is not a boolean');
  t.equal((await set([{ stream_id: id, property: 'bogus', value: true }])).body.msg, 'Unknown subscription property: bogus');
  t.equal((await set([{ stream_id: 99999, property: 'pin_to_top', value: true }])).body.msg, 'Invalid channel ID');
  t.equal((await set([{ stream_id: id }])).status, 400);
  const other = await s.user(Role.MEMBER, 'Other');
  const notSub = await s.api('POST', '/users/me/subscriptions/properties', other, { subscription_data: [{ stream_id: id, property: 'pin_to_top', value: true }] });
  t.equal(notSub.body.msg, `Not subscribed to channel ID ${id}`);
});

t.test('user topics', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await create(s, member, 'topics');
  const id = await streamId(s, member, 'topics');
  const set = (params: Record<string, unknown>) => s.api('POST', '/user_topics', member, params);
  for (const policy of [1, 2, 3]) {
    const res = await set({ stream_id: id, topic: 'no messages yet', visibility_policy: policy });
    t.equal(res.status, 200);
    const reg = await s.api('POST', '/register', member, { fetch_event_types: ['user_topic'] });
    t.match(reg.body.user_topics, [{ stream_id: id, topic_name: 'no messages yet', visibility_policy: policy }]);
  }
  // The same topic in another case is the same topic.
  await set({ stream_id: id, topic: 'No Messages Yet', visibility_policy: 1 });
  t.match((await s.api('POST', '/register', member, { fetch_event_types: ['user_topic'] })).body.user_topics, [{ topic_name: 'No Messages Yet', visibility_policy: 1 }]);
  t.equal((await s.api('POST', '/register', member, { fetch_event_types: ['user_topic'] })).body.user_topics.length, 1);
  await set({ stream_id: id, topic: 'no messages yet', visibility_policy: 0 });
  t.same((await s.api('POST', '/register', member, { fetch_event_types: ['user_topic'] })).body.user_topics, []);
  t.equal((await set({ stream_id: id, topic: 'x', visibility_policy: 4 })).body.msg, 'Invalid visibility_policy');
  t.equal((await set({ stream_id: id, topic: 'x'.repeat(61), visibility_policy: 1 })).body.msg, 'topic is too long (limit: 60 characters)');
  t.equal((await set({ stream_id: 424242, topic: 'x', visibility_policy: 1 })).body.msg, 'Invalid channel ID');
  t.equal((await set({ stream_id: id, visibility_policy: 1 })).body.code, 'REQUEST_VARIABLE_MISSING');
  // A private channel the user cannot see is an invalid id.
  const owner = s.owner;
  await create(s, owner, 'closed', { invite_only: true });
  const closed = await streamId(s, owner, 'closed');
  t.equal((await set({ stream_id: closed, topic: 'x', visibility_policy: 1 })).body.msg, 'Invalid channel ID');
});

t.test('topics and weekly traffic come from the messages', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await create(s, member, 'busy');
  const id = await streamId(s, member, 'busy');
  const send = (topic: string) => s.api('POST', '/messages', member, { type: 'stream', to: id, topic, content: 'hello' });
  const ids: number[] = [];
  for (const topic of ['lunch', 'release', 'Lunch', 'release', 'lunch', 'misc']) ids.push((await send(topic)).body.id);
  const topics = await s.api('GET', `/users/me/${id}/topics`, member);
  t.same(topics.body.topics, [
    { name: 'misc', max_id: ids[5] },
    { name: 'lunch', max_id: ids[4] },
    { name: 'release', max_id: ids[3] },
  ], 'newest first, one entry per topic (case-insensitive), named as in its latest message');
  t.equal((await s.api('GET', '/users/me/999999/topics', member)).body.msg, 'Invalid channel ID');

  // With protected history, a later subscriber sees only topics of messages they received.
  const other = await s.user(Role.MEMBER, 'Other');
  await create(s, member, 'closed', { invite_only: true });
  const closed = await streamId(s, member, 'closed');
  await s.api('POST', '/messages', member, { type: 'stream', to: closed, topic: 'before', content: 'x' });
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'closed' }], principals: [other.id] });
  const later = await s.api('POST', '/messages', member, { type: 'stream', to: closed, topic: 'after', content: 'y' });
  t.same((await s.api('GET', `/users/me/${closed}/topics`, other)).body.topics, [{ name: 'after', max_id: later.body.id }]);
  t.equal((await s.api('GET', `/users/me/${closed}/topics`, member)).body.topics.length, 2);

  // A channel younger than a week has no estimate.
  t.equal((await s.api('GET', `/streams/${id}`, member)).body.stream.stream_weekly_traffic, null);
  // Three weeks old with six messages in that time: two a week.
  const threeWeeks = 21 * 24 * 3600;
  await s.platform.db.updateTable('streams').set({ date_created: Math.floor(Date.now() / 1000) - threeWeeks }).where('id', '=', id).execute();
  t.equal((await s.api('GET', `/streams/${id}`, member)).body.stream.stream_weekly_traffic, 2);
  const subs = await s.api('GET', '/users/me/subscriptions', member);
  t.equal(subs.body.subscriptions[0].stream_weekly_traffic, 2);
});

t.test('concurrent creation of one name makes one channel', async (t) => {
  const s = await startTestServer(t);
  const users = [await s.user(Role.MEMBER, 'Ann'), await s.user(Role.MEMBER, 'Ben'), await s.user(Role.MEMBER, 'Cat'), await s.user(Role.MEMBER, 'Dan')];
  const results = await Promise.all(users.map((u, i) => create(s, u, i % 2 === 0 ? 'Race' : 'race')));
  for (const r of results) t.equal(r.status, 200, JSON.stringify(r.body));
  const rows = await s.platform.db.selectFrom('streams').select(['id', 'name']).where('deactivated', '=', false).execute();
  t.equal(rows.length, 1, 'one channel');
  const id = rows[0]!.id;
  t.same((await s.api('GET', `/streams/${id}/members`, users[0]!)).body.subscribers, users.map((u) => u.id).sort((a, b) => a - b));
});
