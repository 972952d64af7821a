import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { describeErrors, openapi, operationFor, responseValidator } from '../helpers/openapi.js';

/** Documented keys that are present only in a situation this registration is not in, with the reason. */
const CONDITIONAL_KEYS: Record<string, string> = {
  demo_organization_scheduled_deletion_date: 'present only for a demo organization; this one is not',
};

const documented = openapi.paths['/register'].post.responses['200'].content['application/json'].schema.allOf[1].properties as Record<string, unknown>;

t.test('POST /register without fetch_event_types returns every documented key, in the documented schema', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  // An unsupported parameter makes ignored_parameters_unsupported part of the answer too.
  const response = await s.api('POST', '/register', member, { no_such_parameter: 1 });
  t.equal(response.status, 200);
  const body = response.body as Record<string, unknown>;
  const expected = Object.keys(documented).filter(
    (key) => !['result', 'msg'].includes(key) && !(key in CONDITIONAL_KEYS),
  );
  t.ok(expected.length > 190, `${expected.length} documented keys expected`);
  const missing = expected.filter((key) => !(key in body));
  t.same(missing, [], 'no documented key is missing');
  for (const key of Object.keys(CONDITIONAL_KEYS)) t.notOk(key in body, `${key}: ${CONDITIONAL_KEYS[key]}`);
  t.same(body.ignored_parameters_unsupported, ['no_such_parameter']);

  const validate = responseValidator(operationFor('POST', '/register')!, 200)!;
  t.ok(validate(body), `the response validates against the documented schema: ${describeErrors(validate.errors)}`);
});

t.test('muted_topics is sent unless the client fetches user_topic', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const channel = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'muting' }] });
  t.equal(channel.status, 200);
  const streamId = (await s.api('GET', '/get_stream_id', member, { stream: 'muting' })).body.stream_id as number;
  t.equal((await s.api('POST', '/user_topics', member, { stream_id: streamId, topic: 'noise', visibility_policy: 1 })).status, 200);
  t.equal((await s.api('POST', '/user_topics', member, { stream_id: streamId, topic: 'followed', visibility_policy: 3 })).status, 200);

  const all = (await s.api('POST', '/register', member)).body;
  t.equal(all.muted_topics.length, 1, 'only muted topics, not followed ones');
  t.same(all.muted_topics[0].slice(0, 2), ['muting', 'noise']);
  t.type(all.muted_topics[0][2], 'number');
  t.same(all.user_topics.map((u: { topic_name: string }) => u.topic_name).sort(), ['followed', 'noise']);

  const legacy = (await s.api('POST', '/register', member, { fetch_event_types: ['muted_topics'] })).body;
  t.same(legacy.muted_topics, all.muted_topics);
  const modern = (await s.api('POST', '/register', member, { fetch_event_types: ['muted_topics', 'user_topic'] })).body;
  t.notOk('muted_topics' in modern, 'a client that fetches user_topic does not get the deprecated copy');
  t.equal(modern.user_topics.length, 2);

  // A legacy queue hears the whole new list, before the user_topic event, and it equals a fresh fetch.
  const queue = (await s.api('POST', '/register', member, { event_types: ['muted_topics', 'user_topic'] })).body;
  t.equal((await s.api('POST', '/user_topics', member, { stream_id: streamId, topic: 'more noise', visibility_policy: 1 })).status, 200);
  const events = (await s.api('GET', '/events', member, { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).body.events;
  t.same(events.map((e: { type: string }) => e.type), ['muted_topics', 'user_topic']);
  const fresh = (await s.api('POST', '/register', member, { fetch_event_types: ['muted_topics'] })).body.muted_topics;
  t.same(events[0].muted_topics, fresh);
  t.equal(fresh.length, 2);
});
