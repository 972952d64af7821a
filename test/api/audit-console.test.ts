/**
 * The audit console's sign-in, sessions, limits and bad input, through inject (the browser walk
 * is test/e2e/audit-console.test.ts).
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role, type TestServer } from '../helpers/server.js';
import { createUser } from '../../src/services/users.js';
import { signSession } from '../../src/audit-console/session.js';

/** A browser in miniature: keeps cookies, reads the CSRF token of the last page. */
class Visitor {
  cookies = new Map<string, string>();
  setCookies: string[] = [];
  token = '';
  constructor(private readonly s: TestServer) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const r = await this.s.fastify.inject({
      method,
      url,
      headers: { cookie: this.cookieHeader, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    const set = r.headers['set-cookie'];
    this.setCookies = set === undefined ? [] : [set].flat();
    for (const line of this.setCookies) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name!);
      else this.cookies.set(name!, value!);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(r.body);
    if (token) this.token = token[1]!;
    return r;
  }

  async signIn(email: string, secret: string) {
    await this.request('GET', '/audit/login');
    return this.request('POST', '/audit/login', { _csrf: this.token, email, secret });
  }
}

async function userWithPassword(s: TestServer, role: number, password: string) {
  const email = `pw-${randomUUID().slice(0, 8)}@example.com`;
  const meta = { actorId: s.owner.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() };
  const created = await createUser(s.platform, meta, { email, full_name: `Password ${role}`, role, password });
  return { id: created.user_id, email, apiKey: created.api_key };
}

t.test('sign-in with a password or an API key; members are refused; the console writes nothing to the log', async (t) => {
  const s = await startTestServer(t);
  const admin = await userWithPassword(s, Role.ADMINISTRATOR, 'correct horse battery staple');
  const member = await userWithPassword(s, Role.MEMBER, 'member password 1');
  const head = (await s.platform.store.head()).position;

  const wrong = await new Visitor(s).signIn(admin.email, 'not the password');
  t.equal(wrong.statusCode, 401);
  t.match(wrong.body, 'Your username or password is incorrect');
  t.equal(wrong.headers['content-type'], 'text/html; charset=utf-8');

  const v = new Visitor(s);
  const ok = await v.signIn(admin.email, 'correct horse battery staple');
  t.equal(ok.statusCode, 303);
  t.equal(ok.headers.location, '/audit/log');
  const session = v.setCookies.find((c) => c.startsWith('audit_session='))!;
  t.match(session, /HttpOnly/);
  t.match(session, /SameSite=Strict/);
  t.match(session, /Path=\/audit/);
  t.notMatch(session, /Secure/, 'plain HTTP: no Secure flag');
  t.notMatch(session, admin.apiKey, 'the cookie does not carry the API key');
  const log = await v.request('GET', '/audit/log');
  t.equal(log.statusCode, 200);
  t.match(log.headers['content-security-policy'], "default-src 'none'");
  t.match(log.body, 'UserCreated');

  const byKey = new Visitor(s);
  t.equal((await byKey.signIn(admin.email, admin.apiKey)).statusCode, 303, 'an API key works too');

  const m = new Visitor(s);
  const refused = await m.signIn(member.email, 'member password 1');
  t.equal(refused.statusCode, 403);
  t.match(refused.body, 'Not allowed');
  t.notMatch(refused.body, /UserCreated|Position|events/);
  t.notOk(m.cookies.has('audit_session'), 'no session for a member');

  // Signing in, reading and verifying change nothing in the log.
  await v.request('GET', '/audit/verify');
  const started = await v.request('POST', '/audit/verify', { _csrf: v.token, expected_head: '' });
  t.equal(started.statusCode, 303);
  t.equal((await s.platform.store.head()).position, head, 'the log head did not move');

  const out = await v.request('POST', '/audit/logout', { _csrf: v.token });
  t.equal(out.statusCode, 303);
  t.notOk(v.cookies.has('audit_session'));
  t.equal((await v.request('GET', '/audit/log')).headers.location, '/audit/login');
});

t.test('a session ends with a forged or expired cookie, a new API key, deactivation; a demoted admin is refused', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const get = (cookie: string, url = '/audit/log') => s.fastify.inject({ method: 'GET', url, headers: { cookie: `audit_session=${cookie}` } });
  const good = signSession(admin.id, admin.apiKey, Date.now());
  t.equal((await get(good)).statusCode, 200);
  const forged = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
  t.equal((await get(forged)).statusCode, 303, 'a changed MAC');
  t.equal((await get(good.replace(/^\d+/, String(s.owner.id)))).statusCode, 303, 'another user id');
  t.equal((await get(signSession(admin.id, admin.apiKey, Date.now() - 9 * 3600 * 1000))).statusCode, 303, 'expired');
  t.equal((await get('garbage')).statusCode, 303);

  const regenerated = await s.api('POST', '/users/me/api_key/regenerate', admin);
  t.equal(regenerated.status, 200);
  t.equal((await get(good)).statusCode, 303, 'a new API key ends the session');
  const fresh = signSession(admin.id, regenerated.body.api_key, Date.now());
  t.equal((await get(fresh)).statusCode, 200);

  t.equal((await s.api('PATCH', `/users/${admin.id}`, s.owner, { role: Role.MEMBER })).status, 200);
  const demoted = await get(fresh);
  t.equal(demoted.statusCode, 403, 'the role is checked on every page');
  t.match(demoted.body, 'Not allowed');
  t.equal((await get(fresh, '/audit/chart.svg')).statusCode, 403);
  t.equal((await get(fresh, '/audit/export?format=jsonl')).statusCode, 403);

  t.equal((await s.api('PATCH', `/users/${admin.id}`, s.owner, { role: Role.ADMINISTRATOR })).status, 200);
  t.equal((await get(fresh)).statusCode, 200);
  t.equal((await s.api('DELETE', `/users/${admin.id}`, s.owner)).status, 200);
  t.equal((await get(fresh)).statusCode, 303, 'deactivated');
  t.equal((await get('', '/audit/chart.svg')).statusCode, 401, 'no session: the chart is refused');
});

t.test('cookies are Secure when the server is reached over HTTPS', async (t) => {
  const s = await startTestServer(t, { externalUrl: 'https://chat.example.com' });
  const v = new Visitor(s);
  await v.request('GET', '/audit/login');
  t.match(v.setCookies.find((c) => c.startsWith('_csrf='))!, /Secure/);
  await v.request('POST', '/audit/login', { _csrf: v.token, email: s.owner.email, secret: s.owner.apiKey });
  t.match(v.setCookies.find((c) => c.startsWith('audit_session='))!, /Secure/);
});

t.test("the console shares the API's rate limit", async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 5 });
  const cookie = `audit_session=${signSession(s.owner.id, s.owner.apiKey, Date.now())}`;
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await s.fastify.inject({ method: 'GET', url: '/audit/log', headers: { cookie } })).statusCode);
  t.same(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
  const limited = await s.fastify.inject({ method: 'GET', url: '/audit/log', headers: { cookie } });
  t.equal(limited.statusCode, 429);
  t.match(limited.body, 'API usage exceeded rate limit');
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
});

t.test('bad input is a 4xx page, never a 500', async (t) => {
  const s = await startTestServer(t);
  const cookie = `audit_session=${signSession(s.owner.id, s.owner.apiKey, Date.now())}`;
  const cases: Array<[string, number]> = [
    ['/audit/log?actor=abc', 400],
    ['/audit/log?since=garbage', 400],
    ['/audit/log?until=2026-13-45', 400],
    ['/audit/log?cursor=-1', 400],
    ['/audit/log?channel=99999999999', 400],
    ['/audit/log?order=sideways', 400],
    ['/audit/log?type=' + 'x'.repeat(101), 400],
    ['/audit/log?message=2147483647', 200],
    ['/audit/log?type=NoSuchType', 200],
    ['/audit/messages/abc', 400],
    ['/audit/messages/99999999999', 400],
    ['/audit/messages/2147483647', 404],
    ['/audit/time-travel?at=yesterday', 400],
    ['/audit/time-travel?at=99999999999999999999', 400],
    ['/audit/time-travel?at=0', 200],
    ['/audit/time-travel?at=3&channel=x', 400],
    ['/audit/export?format=xml', 400],
    ['/audit/chart.svg?since=2100-01-01T00:00:00Z', 200],
    ['/audit/verify?job=nope', 200],
  ];
  for (const [url, status] of cases) {
    const r = await s.fastify.inject({ method: 'GET', url, headers: { cookie } });
    t.equal(r.statusCode, status, url);
    if (status >= 400) t.match(r.headers['content-type'], 'text/html', `${url} is a page`);
  }
  const post = await s.fastify.inject({ method: 'POST', url: '/audit/verify', headers: { cookie, 'content-type': 'application/json' }, payload: '{"expected_head": 5}' });
  t.equal(post.statusCode, 403, 'a JSON body has no CSRF token');
  const v = new Visitor(s);
  await v.signIn(s.owner.email, s.owner.apiKey);
  await v.request('GET', '/audit/verify');
  const badHead = await v.request('POST', '/audit/verify', { _csrf: v.token, expected_head: 'not hex' });
  t.equal(badHead.statusCode, 400);
  t.match(badHead.body, 'A head hash is 64 hexadecimal digits');
});

t.test('log pages filtered by actor, channel or user walk the log in windows and miss nothing', async (t) => {
  const { logPage } = await import('../../src/audit-console/queries.js');
  const { createChannel, sendStream } = await import('../helpers/channels-fixture.js');
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, s.owner, 'walked', [alice, bob]);
  for (let i = 0; i < 12; i++) await sendStream(s, i % 3 === 0 ? alice : bob, sid, 't', `m${i}`);
  const all = (await s.api('GET', '/audit/events', s.owner, { limit: 1000 })).body.events as Array<{ position: number; metadata: any; data: any; stream_id: string }>;
  const expected = {
    actor: all.filter((e) => e.metadata.actor_id === alice.id).map((e) => e.position),
    channel: all.filter((e) => e.stream_id === `channel-${sid}` || e.data.stream_id === sid || e.data.new_stream_id === sid).map((e) => e.position),
    user: all.filter((e) => e.stream_id === `user-${bob.id}` || e.data.user_id === bob.id).map((e) => e.position),
  };
  const filters = { actor: { actorId: alice.id }, channel: { channelId: sid }, user: { userId: bob.id } };
  for (const [name, filter] of Object.entries(filters) as Array<[keyof typeof expected, object]>) {
    t.ok(expected[name].length >= 2, `${name}: ${expected[name].length} events`);
    for (const window of [1, 3, 20_000]) {
      for (const order of ['newest', 'position'] as const) {
        const seen: number[] = [];
        let cursor: number | undefined;
        for (let pages = 0; pages < 100; pages++) {
          const page = await logPage(s.platform.db, { realmId: 1, ...filter }, order, cursor, 3, (rows) => rows, window);
          seen.push(...page.entries.map((e) => e.position));
          if (page.next === null) break;
          cursor = page.next;
        }
        const want = order === 'newest' ? [...expected[name]].reverse() : expected[name];
        t.same(seen, want, `${name}, ${order}, window ${window}`);
      }
    }
  }
});
