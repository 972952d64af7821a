/**
 * Hostile-input fuzzer over every registered route (issue 9). For each route, fast-check generates
 * requests with random and malformed parameters — wrong types, broken JSON, huge strings, NUL bytes,
 * negative and 2^63 ids, lone surrogates, RTL and zero-width characters, duplicate fields, wrong
 * content types — and every answer must be a JSON envelope (2xx success or 4xx error, never a 5xx),
 * within a time bound, and a 4xx must leave the log head where it was.
 *
 * FUZZ_RUNS raises the number of generated requests per route and role (default 12).
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import type { TestServer, TestUser } from '../helpers/server.js';
import { startTestServer, Role, encodeParams } from '../helpers/server.js';
import { createChannel, sendStream, sendDm } from '../helpers/channels-fixture.js';
import type { ParamSchema, ParamsSpec } from '../../src/http/params.js';
import type { RegisteredRoute } from '../../src/app.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
// A hang fails on REQUEST_BOUND_MS; the file's own limit only has to outlast a slow, loaded machine
// (a CI run on one took over 200 s for what takes 20-30 s on a quiet one).
t.setTimeout(Math.max(600_000, RUNS * 40_000));
const REQUEST_BOUND_MS = 15_000;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;

interface FuzzRequest {
  path: string;
  encoding: 'query' | 'form' | 'json' | 'multipart' | 'duplicate' | 'wrong-type' | 'broken-json' | 'none';
  fields: Record<string, unknown>;
}

/** Strings that have broken parsers before. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\u202Eevil\u202C',
  '\u200B\u200C\u200D\uFEFF',
  '\u0301\u0301\u0301',
  '👨‍👩‍👧‍👦',
  '𝕏'.repeat(40),
  'null',
  'true',
  'false',
  'None',
  '[]',
  '{}',
  '[1,2',
  '{"a":',
  '"',
  '\\',
  '%00',
  '%',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '__proto__',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '1e309',
  '-0',
  '1.5',
  '0x10',
  ' 7 ',
  'NaN',
  'Infinity',
  '[' .repeat(3000) + ']'.repeat(3000),
  JSON.stringify(Array.from({ length: 2000 }, (_, i) => i)),
  '(?P<x>' + 'a'.repeat(200) + ')',
  '(a+)+$',
  'https://example.com/{x}',
  'javascript:alert(1)',
];

const NASTY_NUMBERS: unknown[] = [0, -1, -(2 ** 31), 2 ** 31, 2 ** 53 + 1, 9223372036854775807, -9223372036854775808, 1.5, 1e308];

/** Identifiers that exist in the fixture (filled in before the run). */
const known: { ids: number[]; names: string[] } = { ids: [], names: [] };

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 120_000 }).chain((n) => fc.constantFrom('x', '\u00e9', '\u0000', '🙂', '"').map((c) => c.repeat(n))) },
  { weight: 1, arbitrary: fc.constant(null).map(() => known.names[0] ?? 'general') },
);

const idLike: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null).chain(() => fc.constantFrom(...(known.ids.length ? known.ids : [1]))) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => b.toString()) },
  { weight: 1, arbitrary: hostileString },
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(idLike, { maxLength: 6 }),
  fc.dictionary(hostileString, fc.oneof(idLike, hostileString), { maxKeys: 4 }),
);

/** A value for a declared parameter: mostly well-shaped, sometimes of the wrong type. */
function valueFor(schema: ParamSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(hostileString, idLike, anyJson, fc.constantFrom(true, false, null));
  if (!schema || depth > 3) return wrong;
  const alternatives = schema.anyOf ?? schema.oneOf;
  let shaped: fc.Arbitrary<unknown>;
  if (alternatives && alternatives.length > 0) {
    shaped = fc.oneof(...alternatives.map((s) => valueFor(s, depth + 1)));
  } else if (schema.enum && schema.enum.length > 0) {
    shaped = fc.constantFrom(...schema.enum);
  } else {
    switch (schema.type) {
      case 'integer':
      case 'number':
        shaped = idLike;
        break;
      case 'boolean':
        shaped = fc.constantFrom(true, false, 'true', 'False', '1', 'yes', '');
        break;
      case 'string':
        shaped = hostileString;
        break;
      case 'array':
        shaped = fc.array(valueFor(schema.items, depth + 1), { maxLength: 6 });
        break;
      case 'object':
        if (schema.properties) {
          const props = Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, valueFor(s, depth + 1)]));
          shaped = fc.record(props, { requiredKeys: [] });
        } else {
          shaped = fc.dictionary(hostileString, fc.oneof(hostileString, idLike), { maxKeys: 4 });
        }
        break;
      default:
        shaped = wrong;
    }
  }
  return fc.oneof({ weight: 3, arbitrary: shaped }, { weight: 1, arbitrary: wrong });
}

function requestFor(route: RegisteredRoute): fc.Arbitrary<FuzzRequest> {
  const spec: ParamsSpec = route.params ?? { properties: {} };
  const pathNames = [...route.url.matchAll(/:([a-zA-Z_]+)/g)].map((m) => m[1]!);
  const declared = Object.keys(spec.properties).filter((n) => !pathNames.includes(n));
  const pathSegment = fc.oneof(
    { weight: 4, arbitrary: idLike.map(String) },
    { weight: 1, arbitrary: fc.constantFrom('me', '0', '-1', '9223372036854775808', '1e3', ' 1', 'x', '..') },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 300) },
  ).map((v) => pctEncode(v).slice(0, 2_000) || '1');
  const path = fc.tuple(...pathNames.map(() => pathSegment), hostileString.map((s) => pctEncode(s.slice(0, 100)))).map((segments) => {
    let i = 0;
    let url = route.url.replace(/:[a-zA-Z_]+/g, () => segments[i++]!);
    if (url.includes('*')) url = url.replace('*', `1/${segments[segments.length - 1] || 'x'}/file.txt`);
    return url;
  });
  // Mostly with every required parameter present, so that requests get past the presence checks
  // and reach the deeper validation and the deciders; sometimes with any subset.
  const model = Object.fromEntries(declared.map((n) => [n, valueFor(spec.properties[n])]));
  const required = (spec.required ?? []).filter((n) => declared.includes(n));
  const declaredFields = fc.oneof(
    { weight: 3, arbitrary: fc.record(model, { requiredKeys: required }) },
    { weight: 1, arbitrary: fc.record(model, { requiredKeys: [] }) },
  ) as fc.Arbitrary<Record<string, unknown>>;
  const extraFields = fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'a[]', ''), hostileString.map((s) => s.slice(0, 50))), hostileString, { maxKeys: 2 });
  const fields = fc.tuple(declaredFields, fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extraFields })).map(([a, b]) => ({ ...b, ...a }));
  const encodings: FuzzRequest['encoding'][] = route.method === 'GET'
    ? ['query', 'query', 'query', 'duplicate', 'form', 'none']
    : ['form', 'form', 'form', 'multipart', 'json', 'query', 'duplicate', 'wrong-type', 'broken-json', 'none'];
  return fc.record({ path, encoding: fc.constantFrom(...encodings), fields });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Percent-encodes, writing a lone surrogate as its (invalid) UTF-8 bytes instead of throwing. */
function pctEncode(text: string): string {
  return text.split(LONE_SURROGATE).map(encodeURIComponent).join('%ED%A0%80');
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? 'null';
}

interface Injected {
  status: number;
  body: string;
  contentType: string;
  location: string | undefined;
  ms: number;
}

/**
 * The /api/v1 routes whose success is a redirect rather than an envelope, as on the real server
 * (zerver/views/realm_icon.py and realm_logo.py: get_icon_backend and get_logo_backend answer
 * `redirect(url)` to the image, with the request's query string appended). Everything else under
 * /api/v1 answers JSON; the redirects outside it (/avatar/{id}, /thumbnail, /user_uploads) are not
 * envelopes in the first place.
 */
const REDIRECTS = new Set(['GET /api/v1/realm/icon', 'GET /api/v1/realm/logo']);

async function send(s: TestServer, route: RegisteredRoute, req: FuzzRequest, auth: string | undefined): Promise<Injected> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = auth;
  let url = req.path;
  let payload: string | Buffer | undefined;
  switch (req.encoding) {
    case 'query': {
      const q = encodeParams(req.fields);
      if (q) url += `?${q}`;
      break;
    }
    case 'duplicate': {
      const form = new URLSearchParams(encodeParams(req.fields));
      for (const [k, v] of [...form]) form.append(k, v.split('').reverse().join(''));
      if (route.method === 'GET') url += `?${form}`;
      else {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        payload = form.toString();
      }
      break;
    }
    case 'form':
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = encodeParams(req.fields);
      break;
    case 'json':
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(req.fields);
      break;
    case 'multipart': {
      const form = new FormData();
      for (const [k, v] of Object.entries(req.fields)) form.append(k, asText(v));
      const built = new Request('http://localhost/', { method: 'POST', body: form });
      headers['content-type'] = built.headers.get('content-type')!;
      payload = Buffer.from(await built.arrayBuffer());
      break;
    }
    case 'wrong-type':
      headers['content-type'] = 'text/x-nonsense; charset=utf-8';
      payload = encodeParams(req.fields);
      break;
    case 'broken-json':
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(req.fields).slice(0, -1) + ',';
      break;
    case 'none':
      break;
  }
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const response = await Promise.race([
    s.fastify.inject({ method: route.method as 'GET', url, headers, payload }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_BOUND_MS} ms`)), REQUEST_BOUND_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  const location = response.headers.location;
  return {
    status: response.statusCode,
    body: response.body,
    contentType: String(response.headers['content-type'] ?? ''),
    location: typeof location === 'string' ? location : undefined,
    ms: Date.now() - started,
  };
}

/** Log head, counting only events a request could have written (the idle-queue sweeper runs on its own). */
async function head(s: TestServer): Promise<number> {
  const row = await s.platform.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('position').as('head'))
    .where((eb) => eb(eb.ref('metadata', '->>').key('client' as never), 'is distinct from', 'queue-gc'))
    .executeTakeFirst();
  return Number(row?.head ?? 0);
}

/** Checks one answer; returns a description of what is wrong, or null. */
function problem(route: RegisteredRoute, res: Injected, moved: boolean): string | null {
  if (res.status >= 500) return `status ${res.status}: ${res.body.slice(0, 300)}`;
  // Outside /api/v1 (health probes, the email confirmation page, file downloads) the body is not an envelope.
  if (!route.url.startsWith('/api/v1/')) return res.status >= 400 && moved ? `status ${res.status} but the log head moved` : null;
  // A documented redirect: 302 with a Location that is a path of ours or a web address (no javascript:, no //host), and no state change.
  if (res.status === 302 && REDIRECTS.has(`${route.method} ${route.url}`)) {
    if (!res.location || !(/^\/(?!\/)/.test(res.location) || /^https?:\/\/[^/]/i.test(res.location))) return `redirect to ${JSON.stringify(res.location)}`;
    return moved ? 'redirect but the log head moved' : null;
  }
  {
    let body: { result?: unknown; msg?: unknown; code?: unknown };
    try {
      body = JSON.parse(res.body);
    } catch {
      return `status ${res.status} with a non-JSON body: ${res.body.slice(0, 200)}`;
    }
    if (res.status >= 400) {
      if (body.result !== 'error' || typeof body.msg !== 'string' || typeof body.code !== 'string') return `malformed error envelope: ${res.body.slice(0, 300)}`;
      if (moved) return `status ${res.status} (${body.code}: ${body.msg}) but the log head moved`;
    } else if (res.status >= 200 && res.status < 300 && (body.result !== 'success' || body.msg !== '')) {
      return `malformed success envelope: ${res.body.slice(0, 300)}`;
    }
  }
  return null;
}

/** Requests the fuzzer once answered with a 500 (a database data exception escaping as an internal error). */
async function regressions(t: Test, s: TestServer, member: TestUser, admin: TestUser): Promise<void> {
  const cases: Array<[string, string, TestUser]> = [
    ['GET', '/users/9223372036854775808', member],
    ['POST', '/users/9007199254740992/reactivate', admin],
    ['DELETE', '/users/9007199254740992', admin],
    ['PATCH', '/users/138337209932488521695', admin],
    ['DELETE', '/attachments/9007199254740992', member],
  ];
  for (const [method, path, as] of cases) {
    const before = await head(s);
    const r = await s.api(method, path, as);
    t.equal(r.status, 400, `${method} ${path}: 400`);
    t.equal(r.body.result, 'error');
    t.equal(await head(s), before, `${method} ${path}: nothing appended`);
  }
  // An add that succeeds must not be kept when the delete in the same request fails.
  const before = await head(s);
  const mixed = await s.api('PATCH', '/users/me/subscriptions', member, { add: [{ name: 'fuzz half applied' }], delete: ['no such channel'] });
  t.equal(mixed.status, 400, 'PATCH /users/me/subscriptions with a bad delete: 400');
  t.equal(await head(s), before, 'PATCH /users/me/subscriptions with a bad delete: nothing appended');
  t.equal((await s.api('GET', '/get_stream_id', member, { stream: 'fuzz half applied' })).status, 400, 'the channel was not created');
  // A path the router cannot decode (long NUL runs, broken escapes) gets the envelope too.
  for (const bad of [`/api/v1/users/${'%00'.repeat(500)}`, '/api/v1/users/%E0%A4%A']) {
    const r = await s.fastify.inject({ method: 'GET', url: bad, headers: { authorization: member.auth } });
    t.equal(r.statusCode, 400, `undecodable path ${bad.slice(0, 30)}: 400`);
    t.equal(r.json().result, 'error');
  }
  const nul = await s.fastify.inject({ method: 'GET', url: `/user_uploads/1/${'%00'.repeat(20)}/file.txt`, headers: { authorization: member.auth } });
  t.ok(nul.statusCode >= 400 && nul.statusCode < 500, `NUL bytes in a download path: ${nul.statusCode}`);
}

t.test('fuzz every route with hostile input', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Fuzz Admin');
  let member = await s.user(Role.MEMBER, 'Fuzz Member');
  const other = await s.user(Role.MEMBER, 'Fuzz Other');
  const guest = await s.user(Role.GUEST, 'Fuzz Guest');
  const bot = await s.user(Role.MEMBER, 'Fuzz Bot', { bot_type: 1, bot_owner_id: member.id });
  const pub = await createChannel(s, s.owner, 'fuzz public', [admin, member, other]);
  const priv = await createChannel(s, s.owner, 'fuzz private', [admin, other], { invite_only: true });
  const m1 = await sendStream(s, member, pub, 'fuzz topic', 'hello @**Fuzz Other**');
  const m2 = await sendStream(s, other, priv, 'secret topic', 'secret');
  const m3 = await sendDm(s, other, [member], 'direct');
  await s.api('POST', '/drafts', member, { drafts: [{ type: 'stream', to: [pub], topic: 't', content: 'draft' }] });
  const linkifier = (await s.api('POST', '/realm/filters', admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' })).body.id;
  const playground = (await s.api('POST', '/realm/playgrounds', admin, { name: 'Py', highlighter_language: 'Python', url_template: 'https://play.example.com/?c={code}' })).body.id;
  const group = (await s.api('POST', '/user_groups/create', admin, { name: 'fuzzers', description: 'd', members: [member.id, other.id] })).body.group_id;
  known.ids = [...new Set([1, member.id, other.id, admin.id, guest.id, bot.id, pub, priv, m1, m2, m3, linkifier, playground, group].filter((x): x is number => typeof x === 'number'))];
  known.names = ['fuzz public', 'fuzz private', member.email];

  await regressions(t, s, member, admin);

  const order = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  const routes = [...s.fastify.apiRoutes].sort((a, b) => order.indexOf(a.method) - order.indexOf(b.method));
  t.ok(routes.length >= 80, `${routes.length} routes to fuzz`);

  // The actor may deactivate itself or regenerate its key while being fuzzed; then a fresh one stands in.
  const actors: Record<'member' | 'admin', TestUser> = { member, admin };
  async function usable(who: 'member' | 'admin'): Promise<TestUser> {
    const user = actors[who];
    const row = await s.platform.db.selectFrom('users').select(['is_active', 'role', 'api_key']).where('id', '=', user.id).executeTakeFirst();
    const role = who === 'admin' ? Role.ADMINISTRATOR : Role.MEMBER;
    if (!row || !row.is_active || row.role !== role || row.api_key !== user.apiKey) actors[who] = await s.user(role, `Fuzz ${who}`);
    return actors[who];
  }

  const failures: string[] = [];
  const started = Date.now();
  let total = 0;
  for (const route of routes) {
    const counts: Record<string, number> = {};
    let slowest = 0;
    for (const who of ['member', 'admin'] as const) {
      // Administrators fuzz mutating routes only (reads behave the same for them); the member fuzzes everything.
      if (who === 'admin' && route.method === 'GET') continue;
      const runs = who === 'member' ? RUNS : Math.max(2, Math.ceil(RUNS / 3));
      const property = fc.asyncProperty(requestFor(route), fc.constantFrom('auth', 'auth', 'auth', 'auth', 'none'), async (req, authMode) => {
        const actor = await usable(who);
        const before = await head(s);
        const res = await send(s, route, req, authMode === 'auth' ? actor.auth : undefined);
        const after = await head(s);
        counts[res.status] = (counts[res.status] ?? 0) + 1;
        slowest = Math.max(slowest, res.ms);
        total += 1;
        const wrong = problem(route, res, after !== before);
        if (wrong) throw new Error(`${route.method} ${route.url} as ${authMode === 'auth' ? who : 'nobody'} [${req.encoding} ${req.path}] ${JSON.stringify(req.fields).slice(0, 400)}: ${wrong}`);
      });
      try {
        await fc.assert(property, { numRuns: runs, seed: SEED, endOnFailure: true });
      } catch (error) {
        const cause = (error as Error).cause;
        const message = `${String((error as Error).message)}\n${cause instanceof Error ? cause.message : String(cause ?? '')}`.split('\n').filter((l) => l.trim() && !l.startsWith('Hint')).slice(0, 20).join('\n');
        failures.push(message);
        t.comment(`FAILURE ${message}`);
      }
    }
    // One oversized body per non-GET route: answered 413 without reading it all.
    if (route.method !== 'GET') {
      const actor = await usable('member');
      const before = await head(s);
      const res = await send(s, route, { path: route.url.replace(/:[a-zA-Z_]+/g, '1').replace('*', '1/x/y'), encoding: 'form', fields: { content: 'x'.repeat(11 * 1024 * 1024) } }, actor.auth);
      counts[res.status] = (counts[res.status] ?? 0) + 1;
      total += 1;
      const wrong = problem(route, res, (await head(s)) !== before) ?? (res.status === 413 ? null : `oversized body answered ${res.status}`);
      if (wrong) failures.push(`${route.method} ${route.url} oversized body: ${wrong}`);
    }
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    t.comment(`${route.method} ${route.url}: ${n} requests, statuses ${JSON.stringify(counts)}, slowest ${slowest} ms`);
  }
  t.comment(`${total} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${SEED}, FUZZ_RUNS=${RUNS})`);
  t.same(failures, [], 'no 5xx, no malformed envelope, no hang, no state change on error');
});
