import t from 'tap';
import { startTestServer, Role, sql } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';

// /register values that follow the organization's state or point at files the server serves.

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
  t.same(data.code_to_names['1f642'], ['smile'], 'the real server’s names: smile is U+1F642');
  t.same(data.code_to_names['2b06'], ['up', 'north']);
  t.notOk(Object.values(data.code_to_names).flat().includes('skin-tone-2'));
  t.match(url.pathname, /^\/static\/generated\/emoji\/emoji_api\.[0-9a-f]{12}\.json$/, 'the path carries a hash of the content');
  t.match(response.headers['cache-control'], /max-age/);
  const zulip = await s.fastify.inject({ method: 'GET', url: '/static/generated/emoji/images/emoji/unicode/zulip.png' });
  t.equal(zulip.statusCode, 200, 'the image :zulip: renders with is served');
  t.equal(zulip.headers['content-type'], 'image/png');
  t.same([...zulip.rawPayload.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG, drawn at the first request');
  const icon = await s.fastify.inject({ method: 'GET', url: '/static/images/logo/zulip-icon-128x128.png' });
  t.equal(icon.statusCode, 200);
  t.same([...icon.rawPayload.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'the default organization icon is a PNG');
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

t.test('the organization logo and icon URLs in /register and /server_settings are served', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const state = (await s.api('POST', '/register', member, { fetch_event_types: ['realm'] })).body;
  const settings = (await s.api('GET', '/server_settings', null)).body;
  const urls = [state.realm_icon_url, state.realm_logo_url, state.realm_night_logo_url, settings.realm_icon];
  for (const url of urls) {
    const response = await s.fastify.inject({ method: 'GET', url: new URL(url).pathname });
    t.equal(response.statusCode, 200, url);
    t.match(response.headers['content-type'], /^image\/(png|svg\+xml)$/, url);
    t.ok(response.rawPayload.length > 100, `${url} has content`);
  }
});

t.test('GET /server_settings gives the organization description as HTML; /register keeps its Markdown', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const changed = await s.api('PATCH', '/realm', s.owner, { description: 'Welcome to **the team** <b>& co</b>' });
  t.equal(changed.status, 200, JSON.stringify(changed.body));
  const settings = (await s.api('GET', '/server_settings', null)).body;
  t.equal(settings.realm_description, '<p>Welcome to <strong>the team</strong> &lt;b&gt;&amp; co&lt;/b&gt;</p>');
  const state = (await s.api('POST', '/register', member, { fetch_event_types: ['realm'] })).body;
  t.equal(state.realm_description, 'Welcome to **the team** <b>& co</b>');
  await s.api('PATCH', '/realm', s.owner, { description: 'Now *this*' });
  t.equal((await s.api('GET', '/server_settings', null)).body.realm_description, '<p>Now <em>this</em></p>', 'a change shows at once');
});
