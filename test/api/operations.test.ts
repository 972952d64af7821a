import t from 'tap';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { startTestServer, Role, testConfig, basicAuth } from '../helpers/server.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import healthRoutes from '../../src/http/routes/health.js';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { AppServices } from '../../src/http/services.js';

/** The value of one sample in Prometheus text output (labels given in the exposition's order). */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

t.test('health: live and ready, outside /api/v1 and without credentials', async (t) => {
  const s = await startTestServer(t);
  const live = await s.fastify.inject({ method: 'GET', url: '/health/live' });
  t.equal(live.statusCode, 200);
  t.same(live.json(), { status: 'live' });
  const ready = await s.fastify.inject({ method: 'GET', url: '/health/ready' });
  t.equal(ready.statusCode, 200);
  const body = ready.json();
  t.equal(body.status, 'ready');
  t.equal(body.checks.database, 'ok');
  t.equal(body.checks.projection_lag_events, 0);
  t.equal(body.checks.head_position, (await s.platform.store.head()).position);
  t.equal((await s.fastify.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode, 404, 'not under the API prefix');
});

t.test('health: not ready when projections lag or the database does not answer', async (t) => {
  const s = await startTestServer(t);
  const services: AppServices = { ctx: s.platform, queues: s.queues };
  const app = Fastify();
  await app.register(healthRoutes, { services, maxLagEvents: 2, maxLagSeconds: 3600 });
  t.teardown(() => app.close());
  t.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200, 'caught up');

  // The worker stops; the log grows past the bound.
  s.platform.projections.stop();
  for (let i = 0; i < 3; i++) {
    await s.platform.store.append([{ streamId: `ops-test-${i}`, expectedVersion: -1, events: [{ type: 'OpsTestNoted', data: { i } }] }], {
      actor_id: null, realm_id: 1, client: 'test', request_id: `ops-${i}`, time: new Date().toISOString(),
    });
  }
  const lagging = await app.inject({ method: 'GET', url: '/health/ready' });
  t.equal(lagging.statusCode, 503);
  t.equal(lagging.json().code, 'NOT_READY');
  t.equal(lagging.json().checks.projection_lag_events, 3);
  t.match(lagging.json().msg, /3 events behind/);
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'still live');

  const strictAge = Fastify();
  await strictAge.register(healthRoutes, { services, maxLagEvents: 100, maxLagSeconds: 0 });
  t.teardown(() => strictAge.close());
  await new Promise((resolve) => setTimeout(resolve, 50));
  const old = await strictAge.inject({ method: 'GET', url: '/health/ready' });
  t.equal(old.statusCode, 503);
  t.match(old.json().msg, /s behind/);

  // A database that never answers (a network partition, a stuck server): readiness gives up after its bound.
  const hanging = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: () => new Promise(() => {}), end: async () => {} } as never }) });
  const down = Fastify();
  await down.register(healthRoutes, { services: { ...services, ctx: { ...s.platform, db: hanging } }, databaseTimeoutMs: 300 });
  t.teardown(() => down.close());
  const asked = Date.now();
  const unavailable = await down.inject({ method: 'GET', url: '/health/ready' });
  t.ok(Date.now() - asked < 5_000, 'answers within its bound');
  t.equal(unavailable.statusCode, 503);
  t.match(unavailable.json().msg, /no answer within 300 ms/);
  t.equal(unavailable.json().checks.database, 'unavailable');
});

t.test('metrics: Prometheus text with requests, appends, projections, queues, long-polls, bus', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  t.equal((await s.api('GET', '/users/me', alice)).status, 200);
  t.equal((await s.api('GET', '/users/me', null)).status, 401);
  t.equal((await s.api('GET', '/messages/12345', alice)).status, 400);
  const reg = await s.api('POST', '/register', alice, { event_types: ['message'] });
  t.equal(reg.status, 200);
  const headBefore = (await s.platform.store.head()).position;

  const first = await s.fastify.inject({ method: 'GET', url: '/metrics' });
  t.equal(first.statusCode, 200);
  t.match(first.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = first.body;
  t.equal(sample(text, 'http_requests_total', 'method="GET",route="/api/v1/users/me",status="200"'), 1);
  t.equal(sample(text, 'http_requests_total', 'method="GET",route="/api/v1/users/me",status="401"'), 1);
  t.equal(sample(text, 'http_requests_total', 'method="GET",route="/api/v1/messages/:message_id",status="400"'), 1, 'the route pattern, not the URL');
  const appendedBefore = sample(text, 'eventlog_events_appended_total')!;
  t.ok(appendedBefore >= 2, 'user creation and queue registration were appended');
  t.equal(sample(text, 'eventlog_head_position'), headBefore);
  for (const projection of allProjections) {
    t.equal(sample(text, 'projection_lag_events', `projection="${projection.name}"`), 0, `${projection.name} has no lag`);
    t.equal(sample(text, 'projection_lag_seconds', `projection="${projection.name}"`), 0);
    t.equal(sample(text, 'projection_position', `projection="${projection.name}"`), headBefore);
  }
  t.ok(sample(text, 'projection_events_applied_total', 'projection="users"')! >= 2, 'the users projection folded the creations');
  const queues = await s.platform.db.selectFrom('event_queues').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  t.equal(sample(text, 'event_queues_open'), Number(queues.n));
  t.ok(Number(queues.n) >= 1);
  t.equal(sample(text, 'event_queue_longpolls_blocked'), 0);
  t.equal(sample(text, 'nats_connected', `bus="${s.platform.bus.kind}"`), 1);
  t.match(text, /# TYPE process_cpu_user_seconds_total counter/, 'process metrics too');

  // A blocked long-poll shows while it waits.
  const poll = s.fastify.inject({
    method: 'GET',
    url: `/api/v1/events?queue_id=${encodeURIComponent(reg.body.queue_id)}&last_event_id=${reg.body.last_event_id}`,
    headers: { authorization: alice.auth },
  });
  let blocked = 0;
  for (let i = 0; i < 100 && blocked === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    blocked = sample((await s.fastify.inject({ method: 'GET', url: '/metrics' })).body, 'event_queue_longpolls_blocked') ?? 0;
  }
  t.equal(blocked, 1, 'one long-poll blocked');
  t.equal((await poll).statusCode, 200);

  // The append counter moves by exactly the events a write appended.
  t.equal((await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'counted' }] })).status, 200);
  const headAfter = (await s.platform.store.head()).position;
  t.ok(headAfter > headBefore);
  const after = (await s.fastify.inject({ method: 'GET', url: '/metrics' })).body;
  t.equal(sample(after, 'eventlog_events_appended_total'), appendedBefore + (headAfter - headBefore));
  t.equal(sample(after, 'eventlog_head_position'), headAfter);
  t.equal(sample(after, 'event_queue_longpolls_blocked'), 0);
  t.ok(sample(after, 'http_requests_total', 'method="GET",route="/metrics",status="200"')! >= 2, 'scrapes are counted too');
});

t.test('logs are JSON with the request id that the events carry', async (t) => {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = await testConfig();
  const server = await buildServer(config, { projections: allProjections, inMemory: !config.databaseUrl, logger: { level: 'info', stream } });
  t.teardown(() => server.close());
  const owner = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const send = (headers: Record<string, string>) =>
    server.fastify.inject({
      method: 'POST',
      url: '/api/v1/users/me/subscriptions',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: `subscriptions=${encodeURIComponent(JSON.stringify([{ name: `logged ${Object.keys(headers).length}` }]))}`,
    });

  t.equal((await send({ 'x-request-id': 'ops-log-7' })).statusCode, 200);
  const given = await server.platform.db.selectFrom('events').select(['metadata']).where('type', '=', 'StreamCreated').orderBy('position', 'desc').executeTakeFirstOrThrow();
  t.equal(given.metadata.request_id, 'ops-log-7', 'the client-given id is stored');
  t.ok(lines.some((l) => l.reqId === 'ops-log-7' && l.msg === 'request'), 'and logged');

  t.equal((await send({})).statusCode, 200);
  const generated = await server.platform.db.selectFrom('events').select(['metadata']).where('type', '=', 'StreamCreated').orderBy('position', 'desc').executeTakeFirstOrThrow();
  const id = generated.metadata.request_id as string;
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a generated id is a UUID (unique across restarts and replicas)');
  const logged = lines.filter((l) => l.reqId === id);
  // One line per request: method, path, status and time (never the query string or headers).
  t.equal(logged.length, 1, 'a generated id is logged as stored, on one line');
  t.match(logged[0], { msg: 'request', method: 'POST', path: '/api/v1/users/me/subscriptions', status: 200, ms: Number });
});

t.test('graceful shutdown answers blocked long-polls before closing', async (t) => {
  const config = await testConfig({ heartbeatSeconds: 60 });
  const server = await buildServer(config, { projections: allProjections, inMemory: !config.databaseUrl });
  let closed = false;
  t.teardown(() => (closed ? undefined : server.close()));
  const owner = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const reg = await server.fastify.inject({
    method: 'POST',
    url: '/api/v1/register',
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'event_types=%5B%22message%22%5D',
  });
  t.equal(reg.statusCode, 200);
  const { queue_id, last_event_id } = reg.json();
  // Over a real socket, as a client sees it.
  const address = await server.fastify.listen({ host: '127.0.0.1', port: 0 });
  const started = Date.now();
  const poll = fetch(`${address}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=${last_event_id}`, {
    headers: { authorization: auth },
  }).then(async (r) => ({ statusCode: r.status, json: await r.json() as Record<string, unknown> }));
  for (let i = 0; i < 200 && server.queues.hub.blockedCount === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(server.queues.hub.blockedCount, 1, 'the poll is blocked');
  closed = true;
  await server.close();
  const answered = await poll;
  t.equal(answered.statusCode, 200, 'answered, not dropped');
  t.equal(answered.json.result, 'success');
  t.ok(Date.now() - started < 30_000, 'long before its 60 s heartbeat');
});

t.test('a client that leaves a blocked long-poll frees it at once; another poll is answered', async (t) => {
  const config = await testConfig({ heartbeatSeconds: 60 });
  const server = await buildServer(config, { projections: allProjections, inMemory: !config.databaseUrl });
  t.teardown(() => server.close());
  const owner = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const reg = await server.fastify.inject({
    method: 'POST',
    url: '/api/v1/register',
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'event_types=%5B%22message%22%5D',
  });
  const { queue_id, last_event_id } = reg.json();
  const address = await server.fastify.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=${last_event_id}`;
  const blocked = async (n: number) => {
    for (let i = 0; i < 300 && server.queues.hub.blockedCount !== n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return server.queues.hub.blockedCount;
  };

  const leaving = new AbortController();
  const left = fetch(url, { headers: { authorization: auth }, signal: leaving.signal }).catch((error: Error) => error.name);
  t.equal(await blocked(1), 1, 'the poll is blocked');
  leaving.abort();
  t.equal(await left, 'AbortError');
  t.equal(await blocked(0), 0, 'the poll is gone once its client is');

  // The next poll on the queue still blocks and is answered as usual.
  const answered = fetch(url, { headers: { authorization: auth } }).then((r) => r.json() as Promise<{ result: string; events: Array<{ type: string }> }>);
  t.equal(await blocked(1), 1, 'a second poll blocks');
  const sent = await server.fastify.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `type=private&to=${encodeURIComponent(JSON.stringify([owner.id]))}&content=hello`,
  });
  t.equal(sent.statusCode, 200);
  const body = await answered;
  t.equal(body.result, 'success');
  t.ok(body.events.some((e) => e.type === 'message'), 'the poll is answered with the message');
  t.equal(server.queues.hub.blockedCount, 0);
});
