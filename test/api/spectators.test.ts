import t, { type Test } from 'tap';
import { startTestServer, encodeParams, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { knownSections } from '../../src/event-queue/sections.js';
import { spectatorSectionNames } from '../../src/event-queue/spectator-state.js';
import { LARGER_THAN_MAX_MESSAGE_ID } from '../../src/read/messages.js';

/**
 * Spectators: unauthenticated visitors of web-public channels (the real server's "public access
 * option", allow_anonymous_user_web in zproject/urls.py, get_messages_backend / json_fetch_raw_message
 * / get_topics_backend / events_register_backend without a user, and the spectator cases of
 * test_message_fetch.py, test_events.py and test_subs.py). Only under /json, only with the server
 * setting and enable_spectator_access on, only web-public channels, never anything else.
 */

const NOT_LOGGED_IN = 'Not logged in: API authentication or user session required';
const SESSION = 'Session realm="zulip"';
const BASIC = 'Basic realm="zulip"';
const WEB_PUBLIC = { operator: 'channels', operand: 'web-public' };

interface Answer {
  status: number;
  body: any;
  headers: Record<string, unknown>;
  raw: string;
}

/** A request to the /json surface, without credentials unless `authorization` is given. */
async function json(s: TestServer, method: string, path: string, params: Record<string, unknown> = {}, authorization?: string): Promise<Answer> {
  const encoded = encodeParams(params);
  const isQuery = method === 'GET' || method === 'OPTIONS' || method === 'HEAD';
  const headers: Record<string, string> = {};
  if (authorization) headers.authorization = authorization;
  if (!isQuery) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await s.fastify.inject({
    method: method as 'GET',
    url: `/json${path}${isQuery && encoded ? `?${encoded}` : ''}`,
    headers,
    payload: isQuery ? undefined : encoded,
  });
  let body: unknown;
  try {
    body = response.json();
  } catch {
    body = response.body;
  }
  return { status: response.statusCode, body, headers: response.headers as Record<string, unknown>, raw: response.body };
}

const window = (narrow: unknown[], extra: Record<string, unknown> = {}) => ({ anchor: 'newest', num_before: 100, num_after: 0, narrow, ...extra });

function refusedForSession(t: Test, r: Answer, what: string) {
  t.same([r.status, r.body.msg, r.body.code, r.headers['www-authenticate']], [401, NOT_LOGGED_IN, 'UNAUTHORIZED', SESSION], what);
}

// Every secret is a distinct token: none may ever reach a spectator.
const SECRETS = {
  privateName: 'zqprivnamezq',
  privateTopic: 'ZQPRIVTOPICZQ',
  privateContent: 'ZQPRIVCONTENTZQ',
  publicContent: 'ZQPUBCONTENTZQ',
  publicTopic: 'ZQPUBTOPICZQ',
  archivedContent: 'ZQARCHIVEDZQ',
  dm: 'ZQDIRECTZQ',
  draft: 'ZQDRAFTZQ',
  alertWord: 'zqalertzq',
};
function leaks(text: string): string[] {
  const lower = text.toLowerCase();
  return Object.values(SECRETS).filter((token) => lower.includes(token.toLowerCase()));
}

interface World {
  s: TestServer;
  alice: TestUser;
  bob: TestUser;
  ids: { web: number; other: number; pub: number; priv: number; gone: number };
  messages: { web: number[]; other: number; pub: number; priv: number; gone: number; dm: number; starred: number };
}

/**
 * web: web-public, three messages; other: web-public too; pub: public, not web-public; priv:
 * private; gone: web-public, then archived; a direct message; alice stars a web-public message and
 * has a draft and an alert word.
 */
async function world(t: Test, server: { webPublicStreamsEnabled?: boolean } = { webPublicStreamsEnabled: true }): Promise<World> {
  const s = await startTestServer(t, server);
  if (server.webPublicStreamsEnabled) t.equal((await s.api('PATCH', '/realm', s.owner, { enable_spectator_access: true })).status, 200);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  // Alice's address is for administrators; Bob's for everyone.
  t.equal((await s.api('PATCH', '/settings', alice, { email_address_visibility: 3 })).status, 200);
  const ids = {
    web: await createChannel(s, s.owner, 'web', [alice], server.webPublicStreamsEnabled ? { is_web_public: true } : {}),
    other: await createChannel(s, s.owner, 'other web', [alice], server.webPublicStreamsEnabled ? { is_web_public: true } : {}),
    pub: await createChannel(s, s.owner, 'pub', [alice, bob]),
    priv: await createChannel(s, s.owner, SECRETS.privateName, [alice, bob], { invite_only: true }),
    gone: await createChannel(s, s.owner, 'gone', [alice], server.webPublicStreamsEnabled ? { is_web_public: true } : {}),
  };
  const web = [
    await sendStream(s, alice, ids.web, 'hello', 'web-public message one'),
    await sendStream(s, bob, ids.web, 'hello', 'web-public message two'),
  ];
  const pub = await sendStream(s, alice, ids.pub, SECRETS.publicTopic, `${SECRETS.publicContent} web-public words`);
  const priv = await sendStream(s, alice, ids.priv, SECRETS.privateTopic, `${SECRETS.privateContent} web-public words`);
  const dm = await sendDm(s, alice, [bob], `${SECRETS.dm} web-public words`);
  const gone = await sendStream(s, alice, ids.gone, 'old', `${SECRETS.archivedContent} web-public words`);
  t.equal((await s.api('DELETE', `/streams/${ids.gone}`, s.owner)).status, 200);
  const other = await sendStream(s, alice, ids.other, 'elsewhere', 'the other web-public channel');
  web.push(await sendStream(s, alice, ids.web, 'second topic', 'web-public message three'));
  const starred = web[0]!;
  t.equal((await s.api('POST', '/messages/flags', alice, { messages: [starred], op: 'add', flag: 'starred' })).status, 200);
  t.equal((await s.api('POST', '/drafts', alice, { drafts: [{ type: 'stream', to: [ids.web], topic: 'x', content: SECRETS.draft }] })).status, 200);
  t.equal((await s.api('POST', '/users/me/alert_words', alice, { alert_words: [SECRETS.alertWord] })).status, 200);
  return { s, alice, bob, ids, messages: { web, other, pub, priv, gone, dm, starred } };
}

const idsOf = (r: Answer) => (r.body.messages as Array<{ id: number }>).map((m) => m.id);

t.test('GET /json/messages: a web-public narrow reads the web-public channels, and nothing else', async (t) => {
  const w = await world(t);
  const { s, messages, alice } = w;

  // The real server's test_unauthenticated_get_messages: no narrow, no answer; /api/v1 asks for Basic credentials.
  refusedForSession(t, await json(s, 'GET', '/messages', { anchor: LARGER_THAN_MAX_MESSAGE_ID, num_before: 5, num_after: 1 }), 'no narrow');
  const api = await s.api('GET', '/messages', null, window([WEB_PUBLIC]));
  t.same([api.status, api.body.msg, api.body.code, api.headers['www-authenticate']], [401, NOT_LOGGED_IN, 'UNAUTHORIZED', BASIC], '/api/v1 admits no spectator');

  const all = await json(s, 'GET', '/messages', window([WEB_PUBLIC]));
  t.equal(all.status, 200);
  t.same(idsOf(all), [...messages.web.slice(0, 2), messages.other, messages.web[2]], 'both web-public channels; not the archived one');
  t.same(leaks(all.raw), [], 'no secret in the answer');
  for (const m of all.body.messages) {
    t.same(m.flags, ['read'], 'a spectator has no flags: everything is read (not starred)');
    t.equal(m.type, 'stream');
    t.not(m.avatar_url, null, 'client_gravatar is off for spectators');
  }
  const [first, second] = all.body.messages;
  t.equal(first.sender_email, `user${alice.id}@${new URL(s.platform.config.externalUrl).host}`, 'the address clients are shown, not the real one');
  t.notOk(all.raw.includes(alice.email), "alice's real address is nowhere");
  t.equal(second.sender_email, w.bob.email, "bob's address is for everyone");
  t.equal(first.content, '<p>web-public message one</p>');

  // first_unread: everything is read to a spectator, so the anchor is the newest (test_get_messages_with_web_public).
  const unread = await json(s, 'GET', '/messages', { anchor: 'first_unread', num_before: 2, num_after: 1, narrow: [WEB_PUBLIC] });
  t.equal(unread.body.anchor, LARGER_THAN_MAX_MESSAGE_ID);
  t.same(idsOf(unread), [messages.other, messages.web[2]]);
  t.equal(unread.body.found_newest, true);

  // One channel of them (test_unauthenticated_narrow_to_web_public_channels); a positive in:home is dropped.
  const web = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'stream', operand: 'web' }, { operator: 'in', operand: 'home' }]));
  t.same(idsOf(web), messages.web);
  const byId = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'channel', operand: w.ids.web }, { operator: 'topic', operand: 'hello' }]));
  t.same(idsOf(byId), messages.web.slice(0, 2));
  const legacy = await json(s, 'GET', '/messages', window([['streams', 'web-public'], ['stream', 'web']]));
  t.same(idsOf(legacy), messages.web, 'the legacy pair form');
});

t.test('GET /json/messages: narrows a spectator may not use, and channels that are not web-public', async (t) => {
  const w = await world(t);
  const { s, messages } = w;
  const refusals: Array<[string, unknown[]]> = [
    ['a channel without channels:web-public', [{ operator: 'channel', operand: 'web' }]],
    ['is:dm', [{ operator: 'is', operand: 'dm' }]],
    ['is:private', [{ operator: 'is', operand: 'private' }]],
    ['channels:web-public with is:dm', [WEB_PUBLIC, { operator: 'is', operand: 'dm' }]],
    ['is:starred', [WEB_PUBLIC, { operator: 'is', operand: 'starred' }]],
    ['is:unread', [WEB_PUBLIC, { operator: 'is', operand: 'unread' }]],
    ['is:mentioned', [WEB_PUBLIC, { operator: 'is', operand: 'mentioned' }]],
    ['dm', [WEB_PUBLIC, { operator: 'dm', operand: [w.bob.id] }]],
    ['dm-including', [WEB_PUBLIC, { operator: 'dm-including', operand: w.bob.id }]],
    ['a negated in:home', [WEB_PUBLIC, { operator: 'in', operand: 'home', negated: true }]],
    ['in:all', [WEB_PUBLIC, { operator: 'in', operand: 'all' }]],
    ['a negated channels:web-public', [{ ...WEB_PUBLIC, negated: true }]],
    ['channels:public', [{ operator: 'channels', operand: 'public' }]],
  ];
  for (const [what, narrow] of refusals) refusedForSession(t, await json(s, 'GET', '/messages', window(narrow)), what);

  // A channel that is not web-public is an unknown web-public channel (the real server's words), negated too.
  for (const name of ['pub', SECRETS.privateName]) {
    for (const negated of [false, true]) {
      const r = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'channel', operand: name, negated }]));
      t.same([r.status, r.body.code, r.body.msg], [400, 'BAD_NARROW', `Invalid narrow operator: unknown web-public channel ${name}`], `${name}, negated: ${negated}`);
    }
  }
  const unknown = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'channel', operand: 'no such channel' }]));
  t.same([unknown.status, unknown.body.msg], [400, 'Invalid narrow operator: unknown channel no such channel']);

  // Search, a sender, an id, channels:public beside web-public: still only web-public messages.
  const checks: Array<[string, unknown[], number[]]> = [
    ['search', [WEB_PUBLIC, { operator: 'search', operand: 'words' }], []],
    ['a sender who wrote everywhere', [WEB_PUBLIC, { operator: 'sender', operand: w.alice.id }], [messages.web[0]!, messages.other, messages.web[2]!]],
    ['the id of a private message', [WEB_PUBLIC, { operator: 'id', operand: messages.priv }], []],
    ['the id of a direct message', [WEB_PUBLIC, { operator: 'id', operand: messages.dm }], []],
    ['the id of an archived channel message', [WEB_PUBLIC, { operator: 'id', operand: messages.gone }], []],
    ['channels:public beside web-public', [WEB_PUBLIC, { operator: 'channels', operand: 'public' }], [...messages.web.slice(0, 2), messages.other, messages.web[2]!]],
    ['has:link', [WEB_PUBLIC, { operator: 'has', operand: 'link' }], []],
    ['the archived web-public channel', [WEB_PUBLIC, { operator: 'channel', operand: w.ids.gone }], []],
  ];
  for (const [what, narrow, expected] of checks) {
    const r = await json(s, 'GET', '/messages', window(narrow));
    t.equal(r.status, 200, what);
    t.same(idsOf(r), expected, what);
    t.same(leaks(r.raw), [], `${what}: no secret`);
  }
  const withWeb = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'with', operand: messages.web[1] }]));
  t.same(idsOf(withWeb), messages.web.slice(0, 2), 'with: a web-public message names its conversation');
  const withPrivate = await json(s, 'GET', '/messages', window([WEB_PUBLIC, { operator: 'with', operand: messages.priv }]));
  t.same([withPrivate.status, withPrivate.body.msg], [400, "Invalid narrow operator: Invalid 'with' operator"], 'with: a private message is unknown');
  t.same(leaks(withPrivate.raw), []);
});

t.test('GET /json/messages/{id}: a web-public message; anything else is the same 401', async (t) => {
  const w = await world(t);
  const { s, messages } = w;
  const r = await json(s, 'GET', `/messages/${messages.starred}`);
  t.equal(r.status, 200);
  t.equal(r.body.raw_content, 'web-public message one');
  t.same(r.body.message.flags, ['read'], 'not starred: the flags are no one\'s');
  t.equal(r.body.message.id, messages.starred);
  for (const [what, id] of [['public', messages.pub], ['private', messages.priv], ['direct', messages.dm], ['archived', messages.gone], ['missing', 999999]] as const) {
    const refused = await json(s, 'GET', `/messages/${id}`);
    refusedForSession(t, refused, `a ${what} message`);
    t.same(leaks(refused.raw), []);
  }
  const api = await s.api('GET', `/messages/${messages.starred}`, null);
  t.same([api.status, api.headers['www-authenticate']], [401, BASIC], '/api/v1 admits no spectator');
});

t.test('GET /json/users/me/{id}/topics: web-public channels only', async (t) => {
  const w = await world(t);
  const { s, ids } = w;
  const r = await json(s, 'GET', `/users/me/${ids.web}/topics`);
  t.equal(r.status, 200);
  t.same(r.body.topics.map((x: { name: string }) => x.name), ['second topic', 'hello']);
  for (const [what, id] of [['public', ids.pub], ['private', ids.priv], ['archived', ids.gone], ['missing', 99999], ['huge', '10000000000000000000000']] as const) {
    const refused = await json(s, 'GET', `/users/me/${id}/topics`);
    t.same([refused.status, refused.body.msg], [400, 'Invalid channel ID'], what);
    t.same(leaks(refused.raw), []);
  }
});

t.test('POST /json/register: the state a spectator may see, without a queue', async (t) => {
  const w = await world(t);
  const { s, ids, alice } = w;
  const r = await json(s, 'POST', '/register');
  t.equal(r.status, 200);
  const state = r.body;
  t.equal(state.queue_id, null);
  t.notOk('last_event_id' in state, 'no queue, no last event id');
  t.same(leaks(r.raw), [], 'no secret anywhere in the state');
  t.same(state.subscriptions.map((sub: { stream_id: number }) => sub.stream_id), [ids.web, ids.other], 'the web-public channels, as if subscribed');
  t.match(state.subscriptions[0], { name: 'web', is_web_public: true, in_home_view: true, is_muted: false, pin_to_top: false, stream_weekly_traffic: null });
  t.notOk('subscribers' in state.subscriptions[0]);
  t.same([state.unsubscribed, state.never_subscribed], [[], []]);
  t.notOk('streams' in state, 'include_streams is off for spectators');
  t.same(state.unread_msgs, { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false });
  t.same([state.starred_messages, state.drafts, state.alert_words, state.muted_users, state.user_topics, state.recent_private_conversations], [[], [], [], [], [], []]);
  t.same([state.presences, state.user_status, state.realm_bots, state.scheduled_messages], [{}, {}, [], []]);
  t.same([state.realm_default_streams, state.realm_default_stream_groups, state.custom_profile_fields], [[], [], []]);
  t.equal(state.max_message_id, -1);
  t.match(state, { user_id: 0, full_name: 'Anonymous User', email: 'username@example.com', is_guest: true, is_admin: false, is_owner: false });
  t.match(state, { can_create_public_streams: false, can_create_private_streams: false, can_create_web_public_streams: false, can_subscribe_other_users: false });
  t.match(state, { realm_allow_message_editing: false, realm_edit_topic_policy: 2, realm_delete_own_message_policy: 2, realm_presence_disabled: true });
  t.equal(state.user_settings.web_home_view, 'recent_topics');
  const users = [...state.realm_users, ...state.realm_non_active_users];
  t.ok(users.some((u: { user_id: number }) => u.user_id === alice.id));
  for (const u of users) {
    t.equal(u.delivery_email, null, 'no real address');
    t.notOk('profile_data' in u, 'no profile data');
  }
  t.notOk(r.raw.includes(alice.email), "alice's real address is nowhere");

  const some = await json(s, 'POST', '/register', { fetch_event_types: ['subscription', 'message'], client_gravatar: false });
  t.equal(some.status, 200);
  t.same(Object.keys(some.body).sort(), ['max_message_id', 'msg', 'never_subscribed', 'queue_id', 'result', 'subscriptions', 'unsubscribed', 'zulip_feature_level', 'zulip_merge_base', 'zulip_version']);

  // test_events_register_spectators: these must be off for an anonymous request.
  for (const [key, value] of [['client_gravatar', true], ['include_subscribers', true]] as const) {
    const refused = await json(s, 'POST', '/register', { [key]: value });
    t.same([refused.status, refused.body.msg, refused.body.code], [400, `Invalid '${key}' parameter for anonymous request`, 'BAD_REQUEST']);
  }
  // No queue to poll.
  refusedForSession(t, await json(s, 'GET', '/events', { queue_id: 'x', last_event_id: -1 }), 'GET /json/events');
  const api = await s.api('POST', '/register', null);
  t.same([api.status, api.headers['www-authenticate']], [401, BASIC], '/api/v1 admits no spectator');
});

t.test('every section of /register is decided for spectators', async (t) => {
  t.same(spectatorSectionNames().sort(), knownSections().sort());
});

t.test('the routes that admit spectators are the real server\'s four', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  const admitting = s.fastify.apiRoutes.filter((r) => r.spectators).map((r) => `${r.method} ${r.url}`).sort();
  t.same(admitting, ['GET /api/v1/messages', 'GET /api/v1/messages/:message_id', 'GET /api/v1/users/me/:stream_id/topics', 'POST /api/v1/register']);
});

t.test('a spectator changes nothing: every other route refuses, on /json and on /api/v1', async (t) => {
  const w = await world(t);
  const { s, alice } = w;
  const routes = s.fastify.apiRoutes.filter((r) => r.url.startsWith('/api/v1/') && r.auth === 'user' && !r.spectators);
  t.ok(routes.length > 100);
  const fill = (url: string) => url.replace(/:[a-zA-Z_]+/g, '1').replace(/\*$/, 'file.txt');
  for (const route of routes) {
    const path = fill(route.url).slice('/api/v1'.length);
    const onJson = await json(s, route.method, path, { content: 'x', to: 'web', type: 'stream', topic: 't' });
    refusedForSession(t, onJson, `${route.method} /json${path}`);
    // Basic credentials are not how /json authenticates, as on the real server.
    const withKey = await json(s, route.method, path, {}, alice.auth);
    refusedForSession(t, withKey, `${route.method} /json${path} with a key`);
    const onApi = await s.api(route.method, path, null);
    t.same([onApi.status, onApi.headers['www-authenticate']], [401, BASIC], `${route.method} /api/v1${path}`);
  }
  // Nothing was written: still the same web-public history.
  const after = await json(s, 'GET', '/messages', window([WEB_PUBLIC]));
  t.same(idsOf(after), [...w.messages.web.slice(0, 2), w.messages.other, w.messages.web[2]]);

  // A key on a spectator route is not read either: the narrow rules are a spectator's.
  refusedForSession(t, await json(s, 'GET', '/messages', window([]), alice.auth), 'GET /json/messages with a key and no web-public narrow');
  const keyed = await json(s, 'GET', '/messages', window([WEB_PUBLIC]), alice.auth);
  t.same(keyed.body.messages.map((m: { flags: string[] }) => m.flags), [['read'], ['read'], ['read'], ['read']], 'no flags of the key\'s owner');

  // The /json paths answer as the real server's dispatch does: OPTIONS and 405 before authentication, 404 for no path.
  const options = await json(s, 'OPTIONS', '/messages');
  t.same([options.status, options.headers.allow], [204, 'GET, HEAD, POST']);
  const patch = await json(s, 'PATCH', '/messages');
  t.same([patch.status, patch.body.msg], [405, 'Method Not Allowed']);
  const nowhere = await json(s, 'GET', '/no/such/path');
  t.equal(nowhere.status, 404);
});

t.test('spectators are admitted only with the server setting, the organization setting and a web-public channel', async (t) => {
  const probes = async (s: TestServer, w: World | undefined, what: string) => {
    refusedForSession(t, await json(s, 'GET', '/messages', window([WEB_PUBLIC])), `${what}: GET /messages`);
    refusedForSession(t, await json(s, 'POST', '/register'), `${what}: POST /register`);
    if (w) {
      refusedForSession(t, await json(s, 'GET', `/messages/${w.messages.web[0]}`), `${what}: GET /messages/{id}`);
      refusedForSession(t, await json(s, 'GET', `/users/me/${w.ids.web}/topics`), `${what}: GET topics`);
    }
  };

  // The organization setting off (test_unauthenticated_get_messages), then on again.
  const w = await world(t);
  t.equal((await w.s.api('PATCH', '/realm', w.s.owner, { enable_spectator_access: false })).status, 200);
  await probes(w.s, w, 'enable_spectator_access off');
  t.equal((await w.s.api('PATCH', '/realm', w.s.owner, { enable_spectator_access: true })).status, 200);
  t.equal((await json(w.s, 'GET', '/messages', window([WEB_PUBLIC]))).status, 200, 'on again');

  // No web-public channel left: nothing to read (allow_web_public_streams_access).
  for (const id of [w.ids.web, w.ids.other]) t.equal((await w.s.api('PATCH', `/streams/${id}`, w.s.owner, { is_web_public: false })).status, 200);
  await probes(w.s, w, 'no web-public channel');

  // The server setting off (test_events_register_spectators, WEB_PUBLIC_STREAMS_ENABLED=False).
  const off = await startTestServer(t, { webPublicStreamsEnabled: false });
  await probes(off, undefined, 'WEB_PUBLIC_STREAMS_ENABLED off');
});

t.test('a deactivated organization admits no spectator', async (t) => {
  const w = await world(t);
  t.equal((await w.s.api('POST', '/realm/deactivate', w.s.owner)).status, 200);
  for (const [method, path, params] of [
    ['GET', '/messages', window([WEB_PUBLIC])],
    ['GET', `/messages/${w.messages.web[0]}`, {}],
    ['GET', `/users/me/${w.ids.web}/topics`, {}],
    ['POST', '/register', {}],
  ] as const) {
    const r = await json(w.s, method, path, params);
    t.same([r.status, r.body.code, r.body.msg], [401, 'REALM_DEACTIVATED', 'This organization has been deactivated'], `${method} ${path}`);
  }
});
