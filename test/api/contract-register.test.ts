import t from 'tap';
import { startTestServer, Role, sql } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { describeErrors, openapi, operationFor, responseValidator } from '../helpers/openapi.js';

/** /register keys that other branches are adding in parallel; the lead empties this list when merging them. */
export const REGISTER_KEYS_BUILT_ON_OTHER_BRANCHES: readonly string[] = [
  'presences',
  'server_timestamp',
  'presence_last_update_id',
  'user_status',
  'muted_users',
  'scheduled_messages',
];

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
    (key) => !['result', 'msg'].includes(key) && !(key in CONDITIONAL_KEYS) && !REGISTER_KEYS_BUILT_ON_OTHER_BRANCHES.includes(key),
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
});

t.test('organization settings in /register follow the realm state; group settings are group ids', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const groups = (await s.api('GET', '/user_groups', member)).body.user_groups as Array<{ id: number; name: string }>;
  const idOf = (name: string) => groups.find((g) => g.name === name)!.id;

  const before = (await s.api('POST', '/register', member, { fetch_event_types: ['realm'] })).body;
  t.equal(before.realm_require_unique_names, false);
  t.equal(before.realm_new_stream_announcements_stream_id, -1, '-1: announcements off');
  t.equal(before.realm_create_multiuse_invite_group, idOf('role:administrators'));
  t.equal(before.realm_can_access_all_users_group, idOf('role:everyone'));
  t.same(before.realm_authentication_methods, { Email: { enabled: true, available: true } });
  t.equal(before.realm_jitsi_server_url, null);
  t.equal(before.jitsi_server_url, before.server_jitsi_server_url, 'without an organization server, the server-level one');
  t.equal(before.realm_bot_domain, new URL(before.realm_url).hostname);
  for (const gone of ['realm_email_address_visibility', 'realm_emoji_reactions_enabled', 'role', 'realm_empty_topic_display_name']) {
    t.notOk(gone in before, `${gone} is not part of /register at our feature level`);
  }

  const queue = (await s.api('POST', '/register', member, { event_types: ['realm'] })).body;
  const channel = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'announce' }] });
  t.equal(channel.status, 200);
  const announceId = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'announce' })).body.stream_id as number;
  await setRealmProperties(s, {
    require_unique_names: true,
    new_stream_announcements_stream_id: announceId,
    jitsi_server_url: 'https://jitsi.example.com',
    create_multiuse_invite_group: idOf('role:owners'),
    email_address_visibility: 2,
  });
  const after = (await s.api('POST', '/register', member, { fetch_event_types: ['realm'] })).body;
  t.equal(after.realm_require_unique_names, true);
  t.equal(after.realm_new_stream_announcements_stream_id, announceId);
  t.equal(after.realm_jitsi_server_url, 'https://jitsi.example.com');
  t.equal(after.jitsi_server_url, 'https://jitsi.example.com', 'the organization setting wins');
  t.equal(after.realm_create_multiuse_invite_group, idOf('role:owners'));

  const polled = (await s.api('GET', '/events', member, { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).body;
  const updates = polled.events.filter((e: { type: string }) => e.type === 'realm');
  t.equal(updates.length, 1);
  t.notOk('email_address_visibility' in updates[0].data, 'an unreported property is not announced either');
  t.equal(updates[0].data.require_unique_names, true);
});

t.test('server_emoji_data_url serves the Unicode emoji names the server accepts', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const state = (await s.api('POST', '/register', member, { fetch_event_types: ['realm'] })).body;
  const url = new URL(state.server_emoji_data_url);
  const response = await s.fastify.inject({ method: 'GET', url: url.pathname });
  t.equal(response.statusCode, 200);
  const data = response.json() as { code_to_names: Record<string, string[]> };
  t.same(Object.keys(data), ['code_to_names']);
  t.ok(Object.keys(data.code_to_names).length > 1000);
  t.ok(data.code_to_names['1f419']?.includes('octopus'), 'octopus');
  // What the data promises, the server accepts.
  const channel = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'emoji' }] });
  t.equal(channel.status, 200);
  const sent = await s.api('POST', '/messages', member, { type: 'stream', to: 'emoji', topic: 't', content: 'x' });
  const [code, names] = Object.entries(data.code_to_names).find(([c]) => c === '1f44d')!;
  const reacted = await s.api('POST', `/messages/${sent.body.id}/reactions`, member, { emoji_name: names[0], emoji_code: code, reaction_type: 'unicode_emoji' });
  t.equal(reacted.status, 200, JSON.stringify(reacted.body));
});

t.test('GET /events without a queue id registers a queue and answers with its events and id', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const first = await s.api('GET', '/events', member, { dont_block: true, event_types: ['message'] });
  t.equal(first.status, 200);
  t.same(Object.keys(first.body).sort(), ['events', 'msg', 'queue_id', 'result']);
  t.same(first.body.events, []);
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'polled' }] });
  const sent = await s.api('POST', '/messages', member, { type: 'stream', to: 'polled', topic: 't', content: 'hello' });
  const next = await s.api('GET', '/events', member, { queue_id: first.body.queue_id, last_event_id: -1, dont_block: true });
  t.equal(next.status, 200);
  t.same(next.body.events.map((e: { type: string; message?: { id: number } }) => [e.type, e.message?.id]), [['message', sent.body.id]]);
});

t.test('stop_words are words PostgreSQL english search drops', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const words = (await s.api('POST', '/register', member, { fetch_event_types: ['stop_words'] })).body.stop_words as string[];
  t.ok(words.length > 100);
  const { rows } = await sql<{ word: string }>`SELECT w AS word FROM unnest(${words}::text[]) AS w WHERE to_tsvector('english', w) <> ''::tsvector`.execute(s.platform.db);
  t.same(rows, [], 'each is ignored by the search configuration');
});
