import { randomBytes } from 'node:crypto';
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { testConfig } from '../helpers/config.js';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { freePort } from '../helpers/ports.js';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(server: ChildServer, auth: string, method: string, url: string, params: Record<string, unknown> = {}): Promise<any> {
  const query = method === 'GET' ? `?${encodeParams(params)}` : '';
  const response = await fetch(`${server.url}/api/v1${url}${query}`, {
    method,
    headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: method === 'GET' ? undefined : encodeParams(params),
  });
  return response.json();
}

// Replicas of one deployment share the key-encryption key (each has its own DATA_DIR here).
const SHARED_KEK = randomBytes(32).toString('hex');

async function childEnv(config: Awaited<ReturnType<typeof testConfig>>, dataDir: string): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: String(await freePort()), DATA_KEY_SECRET: SHARED_KEK };
  if (config.databaseUrl) env.DATABASE_URL = config.databaseUrl;
  if (config.natsUrl) Object.assign(env, { NATS_URL: config.natsUrl, NATS_STREAM: config.natsStream });
  return env;
}

const ownerAuth = (dataDir: string) => basicAuth('owner@example.com', /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!);

async function messagesWith(server: ChildServer, auth: string, prefix: string): Promise<string[]> {
  const got = await call(server, auth, 'GET', '/messages', { anchor: 'newest', num_before: 200, num_after: 0, narrow: [{ operator: 'search', operand: prefix }], apply_markdown: false });
  return ((got.messages ?? []) as Array<{ content: string }>).map((m) => m.content).filter((c) => c.startsWith(prefix));
}

t.test('a message that came due while the server was down is sent once after it starts', async (t) => {
  const config = await testConfig();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'scheduled-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = await childEnv(config, dataDir);
  let server = await startChildServer(env);
  t.teardown(() => killHard(server));
  const auth = ownerAuth(dataDir);
  const me = (await call(server, auth, 'GET', '/users/me')).user_id as number;
  const due = nowSeconds() + 3;
  const scheduled = await call(server, auth, 'POST', '/scheduled_messages', { type: 'direct', to: [me], content: 'restart note', scheduled_delivery_timestamp: due });
  t.equal(scheduled.result, 'success', JSON.stringify(scheduled));
  await killHard(server);
  while (nowSeconds() <= due + 1) await sleep(200);

  server = await startChildServer(env);
  let sent: string[] = [];
  for (const started = Date.now(); sent.length === 0 && Date.now() - started < 15_000; await sleep(200)) sent = await messagesWith(server, auth, 'restart note');
  t.same(sent, ['restart note'], 'sent after the start');
  const pending = await call(server, auth, 'GET', '/scheduled_messages');
  t.same(pending.scheduled_messages, [], 'and no longer scheduled');
  await sleep(2_500);
  t.same(await messagesWith(server, auth, 'restart note'), ['restart note'], 'exactly once');
});

const needsPostgres = !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL';

t.test('two server processes on one database send each due message exactly once', { skip: needsPostgres }, async (t) => {
  const config = await testConfig();
  const dirA = mkdtempSync(path.join(tmpdir(), 'scheduled-a-'));
  const dirB = mkdtempSync(path.join(tmpdir(), 'scheduled-b-'));
  t.teardown(() => [dirA, dirB].forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const a = await startChildServer(await childEnv(config, dirA));
  t.teardown(() => killHard(a));
  const b = await startChildServer(await childEnv(config, dirB));
  t.teardown(() => killHard(b));
  const auth = ownerAuth(dirA);
  const me = (await call(a, auth, 'GET', '/users/me')).user_id as number;
  // Far enough ahead that twelve creations on a loaded machine all land before it.
  const due = nowSeconds() + 10;
  const count = 12;
  for (let i = 0; i < count; i++) {
    const r = await call(i % 2 === 0 ? a : b, auth, 'POST', '/scheduled_messages', { type: 'direct', to: [me], content: `pair ${i}`, scheduled_delivery_timestamp: due });
    t.equal(r.result, 'success', JSON.stringify(r));
  }
  let sent: string[] = [];
  for (const started = Date.now(); sent.length < count && Date.now() - started < 20_000; await sleep(250)) sent = await messagesWith(a, auth, 'pair');
  await sleep(2_500);
  sent = await messagesWith(b, auth, 'pair');
  t.same([...sent].sort(), Array.from({ length: count }, (_, i) => `pair ${i}`).sort(), 'each sent exactly once');
  t.same((await call(b, auth, 'GET', '/scheduled_messages')).scheduled_messages, []);
});

t.test('two nodes racing on the same due messages: one send each, one Delivered each', { skip: needsPostgres }, async (t) => {
  const config = await testConfig();
  const a = await buildServer(config, { projections: allProjections, scheduler: { intervalMs: 60_000 } });
  const b = await buildServer(config, { projections: allProjections, scheduler: { intervalMs: 60_000 } });
  t.teardown(async () => {
    await b.close();
    await a.close();
  });
  const owner = await a.platform.db.selectFrom('users').selectAll().where('role', '=', 100).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const due = nowSeconds() + 60;
  const count = 20;
  for (let i = 0; i < count; i++) {
    const r = await a.fastify.inject({
      method: 'POST',
      url: '/api/v1/scheduled_messages',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeParams({ type: 'direct', to: [owner.id], content: `race ${i}`, scheduled_delivery_timestamp: due }),
    });
    t.equal(r.statusCode, 200, r.body);
  }
  const at = new Date((due + 1) * 1000);
  const [ra, rb] = await Promise.all([a.scheduler.runOnce(at), b.scheduler.runOnce(at)]);
  t.equal(ra.delivered + rb.delivered, count, `delivered ${ra.delivered} on A and ${rb.delivered} on B`);
  t.equal(ra.failed + rb.failed, 0);
  // Through the store: message content is sealed in the log and opens only with the key.
  const sends = new Map<string, number>();
  for (const event of await a.platform.store.readAll(0, 100_000)) {
    const content = event.type === 'MessageSent' ? String(event.data.content) : '';
    if (content.startsWith('race ')) sends.set(content, (sends.get(content) ?? 0) + 1);
  }
  t.equal(sends.size, count);
  t.ok([...sends.values()].every((n) => n === 1), 'no message sent twice');
  const delivered = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM events WHERE type = 'ScheduledMessageDelivered'`.execute(a.platform.db);
  t.equal(delivered.rows[0]!.n, count, 'one Delivered per scheduled message');
});
