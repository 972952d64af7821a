import t from 'tap';
import { startTestServer, Role, basicAuth } from '../helpers/server.js';

t.test('auth matrix over every registered route', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const deactivated = await s.user(Role.MEMBER, 'Gone');
  await s.api('DELETE', `/users/${deactivated.id}`, s.owner);
  const routes = s.fastify.apiRoutes.filter((r) => r.url.startsWith('/api/v1/') && r.auth === 'user');
  t.ok(routes.length >= 10, `${routes.length} authenticated routes`);
  for (const route of routes) {
    const url = route.url.replace(/:[a-zA-Z_]+/g, '1');
    const call = (authorization?: string) =>
      s.fastify.inject({ method: route.method as 'GET', url, headers: authorization ? { authorization } : {} });
    const none = await call();
    t.equal(none.statusCode, 401, `${route.method} ${route.url} without credentials`);
    t.equal(none.json().code, 'UNAUTHORIZED');
    t.equal(none.headers['www-authenticate'], 'Basic realm="zulip"');
    const wrong = await call(basicAuth(member.email, 'x'.repeat(32)));
    t.equal(wrong.statusCode, 401);
    t.equal(wrong.json().code, 'INVALID_API_KEY', `${route.method} ${route.url} with a wrong key`);
    const gone = await call(deactivated.auth);
    t.equal(gone.statusCode, 401);
    t.equal(gone.json().code, 'USER_DEACTIVATED', `${route.method} ${route.url} as a deactivated user`);
  }
});

t.test('error envelopes: unknown routes, wrong methods, bad parameters', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');

  const unknown = await s.api('GET', '/no/such/endpoint', member);
  t.equal(unknown.status, 404);
  t.match(unknown.body, { result: 'error', code: 'NOT_FOUND' });

  const wrongMethod = await s.api('PUT', '/users', member);
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.body.result, 'error');

  const badJson = await s.api('POST', '/register', member, { event_types: '[not json' });
  t.equal(badJson.status, 400);
  // A JsonableError on the real server (zerver/lib/request.py): INVALID_JSON is only its body-payload "Malformed JSON".
  t.same(badJson.body, { result: 'error', msg: 'Argument "event_types" is not valid JSON.', code: 'BAD_REQUEST' });

  const missing = await s.api('POST', '/fetch_api_key', null, { username: 'x@example.com' });
  t.equal(missing.status, 400);
  t.same(missing.body, { result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });

  const wrongType = await s.api('GET', `/users/${member.id}`, member, { include_custom_profile_fields: 'maybe' });
  t.equal(wrongType.status, 400);
  t.equal(wrongType.body.result, 'error');

  const ignored = await s.api('GET', '/users', member, { bogus: 1, another: 'x' });
  t.equal(ignored.status, 200);
  t.same(ignored.body.ignored_parameters_unsupported, ['bogus', 'another']);

  const nul = await s.api('PATCH', `/users/${member.id}`, s.owner, { full_name: 'a\u0000b' });
  t.equal(nul.status, 400);

  // Integers and booleans are accepted bare and JSON-encoded.
  const bare = await s.api('POST', '/register', member, { apply_markdown: 'true', queue_lifespan_secs: '700' });
  const encoded = await s.api('POST', '/register', member, { apply_markdown: true, queue_lifespan_secs: 700 });
  t.equal(bare.status, 200);
  t.equal(encoded.status, 200);

  // Malformed bodies never produce a 5xx.
  const garbage = await s.fastify.inject({ method: 'POST', url: '/api/v1/register', headers: { authorization: member.auth, 'content-type': 'application/json' }, payload: '{"broken' });
  t.ok(garbage.statusCode >= 400 && garbage.statusCode < 500, `malformed JSON body: ${garbage.statusCode}`);
  t.equal(garbage.json().result, 'error');
  const weird = await s.fastify.inject({ method: 'POST', url: '/api/v1/register', headers: { authorization: member.auth, 'content-type': 'text/x-unknown' }, payload: 'abc' });
  t.ok(weird.statusCode >= 400 && weird.statusCode < 500, `unknown content type: ${weird.statusCode}`);
  const badAuthHeader = await s.fastify.inject({ method: 'GET', url: '/api/v1/users', headers: { authorization: 'Basic !!!notbase64' } });
  t.equal(badAuthHeader.statusCode, 401);
});

t.test('multipart/form-data bodies are read like form-encoded ones', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const form = new FormData();
  form.append('event_types', JSON.stringify(['realm_user']));
  form.append('apply_markdown', 'true');
  const request = new Request('http://localhost/api/v1/register', { method: 'POST', body: form });
  const response = await s.fastify.inject({
    method: 'POST',
    url: '/api/v1/register',
    headers: { authorization: member.auth, 'content-type': request.headers.get('content-type')! },
    payload: Buffer.from(await request.arrayBuffer()),
  });
  t.equal(response.statusCode, 200);
  t.type(response.json().queue_id, 'string');
});

t.test('rate limit: 429 RATE_LIMIT_HIT with Retry-After once the budget is spent', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 5 });
  const member = await s.user(Role.MEMBER, 'Member');
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof s.api>> | undefined;
  for (let i = 0; i < 7; i++) {
    last = await s.api('GET', '/users/me', member);
    statuses.push(last.status);
  }
  t.same(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
  t.equal(last!.status, 429);
  t.equal(last!.body.code, 'RATE_LIMIT_HIT');
  t.type(last!.body['retry-after'], 'number');
  t.ok(Number(last!.headers['retry-after']) >= 1, 'Retry-After header');
  const other = await s.user(Role.MEMBER, 'Other');
  t.equal((await s.api('GET', '/users/me', other)).status, 200, 'the budget is per user');
});
