import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, encodeParams, sql, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { appendRaw, deepJsonText } from '../helpers/raw-append.js';
import { MAX_EVENT_BYTES } from '../../src/eventstore/event-limits.js';

const nestedArray = (levels: number) => `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;

async function countEvents(s: TestServer, type: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE type = ${type}`.execute(s.platform.db);
  return rows[0]!.n;
}

async function form(s: TestServer, as: TestUser, method: 'POST' | 'GET', url: string, body: string, headers: Record<string, string> = {}) {
  const response = await s.fastify.inject({
    method,
    url: `/api/v1${url}`,
    headers: { authorization: as.auth, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: body,
  });
  return { status: response.statusCode, body: response.json() as Record<string, any> };
}

t.test('a narrow nested deep, or of the wrong type, is a 400 and never reaches the log', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const before = await countEvents(s, 'QueueRegistered');
  for (const levels of [1_500, 5_000]) {
    const narrow = `[{"operator": "stream", "operand": ${nestedArray(levels)}}]`;
    const r = await form(s, ann, 'POST', '/register', `narrow=${encodeURIComponent(narrow)}`);
    t.equal(r.status, 400, `${levels} levels`);
    t.equal(r.body.result, 'error');
  }
  for (const narrow of [[['stream', { a: 1 }]], [['stream']], [[1, 'x']], [{ operator: 'topic', operand: [['x']] }], [{ operator: 'topic', operand: true }]]) {
    const r = await s.api('POST', '/register', ann, { narrow });
    t.equal(r.status, 400, JSON.stringify(narrow));
    t.equal(r.body.code, 'BAD_NARROW');
  }
  // A JSON body reaches the parameters as values, not text: the same bound holds.
  const json = await s.fastify.inject({
    method: 'POST',
    url: '/api/v1/register',
    headers: { authorization: ann.auth, 'content-type': 'application/json' },
    payload: `{"narrow": [{"operator": "stream", "operand": ${nestedArray(5_000)}}]}`,
  });
  t.equal(json.statusCode, 400);
  t.equal(await countEvents(s, 'QueueRegistered'), before, 'nothing was registered');

  const good = await s.api('POST', '/register', ann, { narrow: [['stream', 'Denmark'], ['topic', 'x']] });
  t.equal(good.status, 200);
  const ids = await s.api('POST', '/register', ann, { narrow: [{ operator: 'dm', operand: [ann.id] }, { operator: 'sender', operand: ann.id }] });
  t.equal(ids.status, 200, 'integer and id-list operands, as documented');
});

t.test('deeply nested JSON in any parameter is a 400, not a 500', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const deep = nestedArray(5_000);
  const cases: Array<[string, string, string]> = [
    ['POST', '/users/me/subscriptions', `subscriptions=${encodeURIComponent(deep)}`],
    ['POST', '/messages', `type=direct&content=x&to=${encodeURIComponent(deep)}`],
    ['POST', '/messages', `type=stream&content=x&topic=t&to=${encodeURIComponent(`{"a":${deep}}`)}`],
    ['POST', '/messages/flags', `messages=${encodeURIComponent(deep)}&op=add&flag=read`],
    ['POST', '/register', `client_capabilities=${encodeURIComponent(`{"a":${deep}}`)}`],
    ['POST', '/register', `event_types=${encodeURIComponent(deep)}`],
  ];
  for (const [method, url, body] of cases) {
    const r = await form(s, ann, method as 'POST', url, body);
    t.equal(r.status, 400, `${method} ${url}: ${r.body.msg}`);
    t.equal(r.body.result, 'error');
  }
});

t.test('registration options are bounded before they reach the log', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const before = await countEvents(s, 'QueueRegistered');
  const huge = await s.api('POST', '/register', ann, { narrow: [['search', 'x'.repeat(2 * 1024 * 1024)]] });
  t.equal(huge.status, 400, 'a 2 MB operand');
  t.equal(huge.body.code, 'BAD_NARROW');
  const manyTypes = await s.api('POST', '/register', ann, { event_types: Array.from({ length: 20_000 }, (_, i) => `type_${i}`) });
  t.equal(manyTypes.status, 400, '20,000 event types');
  t.match(manyTypes.body.msg, /event_types has too many items/);
  const longType = await s.api('POST', '/register', ann, { event_types: ['x'.repeat(1_000)] });
  t.equal(longType.status, 400);
  const manyTerms = await s.api('POST', '/register', ann, { narrow: Array.from({ length: 500 }, () => ['is', 'dm']) });
  t.equal(manyTerms.status, 400);
  const capabilities = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`c${i}`, true]));
  t.equal((await s.api('POST', '/register', ann, { client_capabilities: capabilities })).status, 400, '5,000 client capabilities');
  t.equal(await countEvents(s, 'QueueRegistered'), before, 'nothing was registered');
  t.equal((await s.api('POST', '/register', ann, { event_types: ['message', 'subscription'], client_capabilities: { notification_settings_null: true } })).status, 200);
});

t.test('the queue and local ids a message carries to its sender are bounded', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const sid = await createChannel(s, ann, 'echo', []);
  const send = (extra: Record<string, unknown>) => s.api('POST', '/messages', ann, { type: 'stream', to: String(sid), topic: 't', content: 'hi', ...extra });
  t.equal((await send({ local_id: 'x'.repeat(100_000) })).status, 400, 'a 100,000-character local_id');
  t.equal((await send({ queue_id: 'q'.repeat(100_000) })).status, 400, 'a 100,000-character queue_id');
  t.equal((await send({ local_id: '1234.01', queue_id: `1700000000:${randomUUID()}` })).status, 200);
});

t.test('the event store refuses an oversized or too deep event before appending anything', async (t) => {
  const s = await startTestServer(t);
  const head = await s.platform.store.head();
  const meta = { actor_id: null, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  const big = { type: 'DraftsCreated', data: { blob: 'x'.repeat(MAX_EVENT_BYTES) } };
  const small = { type: 'DraftsCreated', data: { blob: 'y' } };
  await t.rejects(s.platform.store.append([{ streamId: `test-${randomUUID()}`, expectedVersion: -1, events: [small, big] }], meta), { status: 400, code: 'BAD_REQUEST', message: /too large/ });
  const deep = { type: 'DraftsCreated', data: JSON.parse(deepJsonText(100)) as Record<string, unknown> };
  await t.rejects(s.platform.store.append([{ streamId: `test-${randomUUID()}`, expectedVersion: -1, events: [deep] }], meta), { status: 400, message: /nested too deeply/ });
  t.same(await s.platform.store.head(), head, 'nothing was appended');
});

t.test('X-Request-Id is kept when it is a short token, replaced otherwise', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const sid = await createChannel(s, ann, 'ids', []);
  const requestIdOf = async (header: string) => {
    const r = await form(s, ann, 'POST', '/messages', encodeParams({ type: 'stream', to: String(sid), topic: 't', content: 'hi' }), { 'x-request-id': header });
    t.equal(r.status, 200);
    const { rows } = await sql<{ id: string }>`SELECT metadata->>'request_id' AS id FROM events WHERE type = 'MessageSent' AND (data->>'message_id')::int = ${r.body.id as number}`.execute(s.platform.db);
    return rows[0]!.id;
  };
  t.equal(await requestIdOf('req-42.abc:1'), 'req-42.abc:1');
  t.equal(await requestIdOf('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8'), 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8');
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  t.match(await requestIdOf('x'.repeat(10_000)), uuid, 'a long id is replaced');
  t.match(await requestIdOf('<script>alert(1)</script>'), uuid, 'an id with odd characters is replaced');
  t.match(await requestIdOf('two words'), uuid);
});

t.test('a last_event_id the queue never sent is a 400, and the queue keeps delivering', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const sid = await createChannel(s, ann, 'polled', []);
  const reg = await s.api('POST', '/register', ann, { event_types: ['message'] });
  const queueId = reg.body.queue_id as string;
  const bad = await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: 1_000_000_000_000_000, dont_block: true });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'BAD_REQUEST');
  t.equal(bad.body.msg, 'Event 1000000000000000 was not in this queue');
  const beyondHead = (await s.platform.store.head()).position + 5;
  t.equal((await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: beyondHead * 1000, dont_block: true })).status, 400);

  const id = await sendStream(s, ann, sid, 't', 'still there?');
  const poll = await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: reg.body.last_event_id, dont_block: true });
  t.equal(poll.status, 200);
  t.same(poll.body.events.map((e: any) => e.message?.id), [id], 'the queue delivers after the refused id');
  const last = poll.body.events[0].id as number;
  // An id the queue did send, and a heartbeat's, stay fine.
  t.equal((await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: last, dont_block: true })).status, 200);
  const heartbeat = await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: last });
  t.equal(heartbeat.body.events[0].type, 'heartbeat');
  t.equal((await s.api('GET', '/events', ann, { queue_id: queueId, last_event_id: heartbeat.body.events[0].id, dont_block: true })).status, 200);
});

t.test('malformed multipart bodies are 400s with a JSON error', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user();
  const boundary = 'XyZ123';
  const truncated = `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\nhello`;
  const cases: Array<[string, string, string]> = [
    ['no boundary', 'multipart/form-data', truncated],
    ['truncated part', `multipart/form-data; boundary=${boundary}`, truncated],
    ['no closing delimiter', `multipart/form-data; boundary=${boundary}`, `${truncated}\r\n`],
    ['empty boundary', 'multipart/form-data; boundary=', truncated],
    ['boundary of 300 characters', `multipart/form-data; boundary=${'b'.repeat(300)}`, truncated],
  ];
  for (const url of ['/messages', '/register', '/user_uploads', '/drafts']) {
    for (const [name, type, payload] of cases) {
      const r = await s.fastify.inject({ method: 'POST', url: `/api/v1${url}`, headers: { authorization: ann.auth, 'content-type': type }, payload });
      t.ok(r.statusCode >= 400 && r.statusCode < 500, `${url}, ${name}: ${r.statusCode}`);
      t.equal(r.json().result, 'error', `${url}, ${name}: a JSON error`);
    }
  }
});

t.test('the audit API serves a log entry of any depth the database holds', async (t) => {
  const s = await startTestServer(t);
  const queueId = randomUUID();
  const data = `{"queue_id":"${queueId}","user_id":${s.owner.id},"realm_id":1,"event_types":null,"narrow":[["stream",${deepJsonText(2_400)}]],"options":{},"lifespan_secs":600,"created_at":1}`;
  await appendRaw(s.platform.db, `queue-${queueId}`, 'QueueRegistered', data);
  const r = await s.api('GET', '/audit/events', s.owner, { limit: 1000 });
  t.equal(r.status, 200);
  const entry = r.body.events.find((e: any) => e.type === 'QueueRegistered' && e.data.queue_id === queueId);
  t.ok(entry, 'the deep entry is listed');
});
