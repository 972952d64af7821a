import t from 'tap';
import { testConfig } from '../helpers/config.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { basicAuth, encodeParams } from '../helpers/server.js';

// Two server processes share one PostgreSQL (and NATS): only meaningful on a real server.
t.test('two nodes on one database: writes, queues and projection takeover', { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL' }, async (t) => {
  const config = await testConfig();
  const a = await buildServer(config, { projections: allProjections });
  const b = await buildServer(config, { projections: allProjections });
  t.teardown(() => b.close());
  t.equal(b.bootstrap.created, false, 'the second node does not create a second organization');
  const owners = await a.platform.db.selectFrom('users').select('id').where('role', '=', 100).execute();
  t.equal(owners.length, 1, 'one owner');
  const owner = await a.platform.db.selectFrom('users').selectAll().where('role', '=', 100).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const call = (node: typeof a, method: string, url: string, params: Record<string, unknown> = {}) =>
    node.fastify.inject({
      method: method as 'GET',
      url: `/api/v1${url}${method === 'GET' ? `?${encodeParams(params)}` : ''}`,
      headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      payload: method === 'GET' ? undefined : encodeParams(params),
    });

  // A queue registered through A is read through B, and B's long-poll wakes on a write through A.
  const reg = (await call(a, 'POST', '/register', { event_types: ['realm_user'] })).json();
  t.type(reg.queue_id, 'string');
  const poll = call(b, 'GET', '/events', { queue_id: reg.queue_id, last_event_id: reg.last_event_id });
  await new Promise((r) => setTimeout(r, 200));
  const created = (await call(a, 'POST', '/users', { email: 'cross@example.com', full_name: 'Cross Node' })).json();
  t.type(created.user_id, 'number');
  const delivered = (await poll).json();
  t.match(delivered.events, [{ type: 'realm_user', op: 'add', person: { user_id: created.user_id } }]);

  // Read-your-writes across nodes: B sees A's write immediately.
  const viaB = (await call(b, 'GET', `/users/${created.user_id}`)).json();
  t.equal(viaB.user.full_name, 'Cross Node');

  // Credentials changed through A: B takes the new key at once and stops taking the old one as soon
  // as it learns the read tables moved (the wake from A), within a bound.
  const crossAuth = async (key: string) => b.fastify.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: basicAuth('cross@example.com', key) } });
  const crossRow = await a.platform.db.selectFrom('users').select('api_key').where('id', '=', created.user_id).executeTakeFirstOrThrow();
  t.equal((await crossAuth(crossRow.api_key)).statusCode, 200, 'B caches the user');
  const regenerated = await a.fastify.inject({ method: 'POST', url: '/api/v1/users/me/api_key/regenerate', headers: { authorization: basicAuth('cross@example.com', crossRow.api_key) } });
  const newKey = regenerated.json().api_key as string;
  t.equal((await crossAuth(newKey)).statusCode, 200, 'the new key works on B immediately');
  let oldRefused = false;
  for (const started = Date.now(); !oldRefused && Date.now() - started < 2_000; await new Promise((r) => setTimeout(r, 20))) {
    oldRefused = (await crossAuth(crossRow.api_key)).statusCode === 401;
  }
  t.ok(oldRefused, 'the old key is refused on B within 2 s');

  // A queue B has read (and so keeps in its cache) is deleted through A: B refuses it within a bound.
  const queue = (await call(a, 'POST', '/register', { event_types: ['realm_user'] })).json();
  const readOnB = await call(b, 'GET', '/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true });
  t.equal(readOnB.statusCode, 200, 'B reads the queue');
  t.equal((await call(a, 'DELETE', '/events', { queue_id: queue.queue_id })).statusCode, 200, 'deleted through A');
  let goneOnB = false;
  for (const started = Date.now(); !goneOnB && Date.now() - started < 2_000; await new Promise((r) => setTimeout(r, 20))) {
    const r = await call(b, 'GET', '/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true });
    goneOnB = r.statusCode === 400 && r.json().code === 'BAD_EVENT_QUEUE_ID';
  }
  t.ok(goneOnB, 'B answers BAD_EVENT_QUEUE_ID within 2 s');

  // A goes away; B keeps projecting everything written through it.
  await a.close();
  const later = (await call(b, 'POST', '/users', { email: 'after@example.com', full_name: 'After A' })).json();
  const seen = (await call(b, 'GET', `/users/${later.user_id}`)).json();
  t.equal(seen.user.full_name, 'After A', 'B took over the projection work');
});
