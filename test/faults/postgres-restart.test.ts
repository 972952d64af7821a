/**
 * PostgreSQL restarted under load (issue 9), once with a clean fast shutdown and once with an
 * immediate one (a crash: recovery from the WAL on start). Requests during the outage get a JSON 503 (never a
 * hang past the bound, never another 5xx, never a crash); the server recovers by itself with no
 * restart, and every write that was acknowledged is still there afterwards.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChildServer, killHard } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';

t.setTimeout(170_000);

const REQUEST_BOUND_MS = 15_000;

for (const mode of ['fast', 'immediate'] as const) t.test(`PostgreSQL ${mode === 'fast' ? 'restarted' : 'crashed and restarted'} during load`, async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-pg-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChildServer({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    DATABASE_URL: postgres.url,
    NATS_URL: nats.url,
    NATS_STREAM: 'FAULTS',
    HEARTBEAT_SECONDS: '2',
  });
  t.teardown(() => killHard(server));
  process.once('exit', () => server.process.kill('SIGKILL'));
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  // The client's bound is looser than the one asserted, so a slow answer is measured, not aborted.
  const call = client(server.url, 'owner@example.com', key, REQUEST_BOUND_MS + 10_000);
  const reg = await call('POST', '/register', { event_types: ['realm_user'] });
  t.equal(reg.status, 200);

  const acknowledged: number[] = [];
  const problems: string[] = [];
  const statuses: Record<string, number> = {};
  let slowest = 0;
  let running = true;
  let n = 0;
  const record = (what: string, r: { status: number; body: any; ms: number }) => {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    slowest = Math.max(slowest, r.ms);
    if (r.ms > REQUEST_BOUND_MS) problems.push(`${what}: answered after ${r.ms} ms`);
    if (r.status === 200) return;
    if (r.status !== 503) problems.push(`${what}: status ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    else if (typeof r.body !== 'object' || r.body.result !== 'error' || typeof r.body.code !== 'string' || typeof r.body.msg !== 'string') {
      problems.push(`${what}: 503 without a JSON error envelope: ${String(r.body).slice(0, 200)}`);
    }
  };
  const writer = async (w: number) => {
    while (running) {
      n += 1;
      try {
        const r = await call('POST', '/users', { email: `pg${w}-${n}@example.com`, full_name: `Pg ${w} ${n}` });
        record('POST /users', r);
        if (r.status === 200) acknowledged.push(r.body.user_id);
        else await new Promise((res) => setTimeout(res, 100));
      } catch (error) {
        problems.push(`POST /users: ${String(error)}`);
      }
    }
  };
  // GET /users/me is answered from caches; GET /messages reads the database every time, so the
  // outage is seen even when every writer happens to be waiting for its projection across it.
  const reader = async () => {
    for (let i = 0; running; i++) {
      const [url, params] = i % 2 === 0 ? ['/users/me', {}] : ['/messages', { anchor: 'newest', num_before: 1, num_after: 0 }];
      try {
        const r = await call('GET', url, params);
        record(`GET ${url}`, r);
        if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
      } catch (error) {
        problems.push(`GET ${url}: ${String(error)}`);
      }
    }
  };
  // A long-poll blocked across the outage: the hub's scan of new events fails while PostgreSQL is
  // away and must neither crash the process (it once did: an unhandled rejection) nor lose events.
  const pollQueue = await call('POST', '/register', { event_types: ['realm_user'] });
  t.equal(pollQueue.status, 200);
  const polled = new Set<number>();
  let pollLast = pollQueue.body.last_event_id as number;
  const poller = async () => {
    while (running) {
      try {
        const r = await call('GET', '/events', { queue_id: pollQueue.body.queue_id, last_event_id: pollLast });
        record('GET /events', r);
        if (r.status !== 200) {
          await new Promise((res) => setTimeout(res, 100));
          continue;
        }
        for (const event of r.body.events as Array<{ id: number; type: string; op?: string; person?: { user_id: number } }>) {
          if (event.type === 'realm_user' && event.op === 'add') polled.add(event.person!.user_id);
          pollLast = Math.max(pollLast, event.id);
        }
      } catch (error) {
        problems.push(`GET /events: ${String(error)}`);
      }
    }
  };
  const load = [...Array.from({ length: 3 }, (_, w) => writer(w)), reader(), poller()];
  await new Promise((r) => setTimeout(r, 1_500));
  const beforeOutage = acknowledged.length;
  postgres.stop(mode);
  await new Promise((r) => setTimeout(r, 4_000));
  postgres.start();

  // Recovery without a restart: writes succeed again within a bound.
  const restarted = Date.now();
  const before = acknowledged.length;
  while (acknowledged.length === before && Date.now() - restarted < 30_000) await new Promise((r) => setTimeout(r, 100));
  t.ok(acknowledged.length > before, `writes succeed again ${Date.now() - restarted} ms after PostgreSQL is back`);
  await new Promise((r) => setTimeout(r, 1_500));
  running = false;
  await Promise.all(load);

  t.comment(`statuses ${JSON.stringify(statuses)}, slowest ${slowest} ms, ${beforeOutage} writes before the outage, ${acknowledged.length} in all`);
  t.ok((statuses['503'] ?? 0) > 0, 'the outage was seen as 503s');
  t.same(problems, [], 'only 200 or a JSON 503, each within the bound');
  if (!t.ok(server.process.exitCode === null && server.process.signalCode === null, 'the server process never stopped')) {
    // Plain lines (a crash's stack, the exit line) and the structured log's errors; all of it in a file.
    const output = server.output();
    const file = path.join(tmpdir(), `postgres-restart-${mode}-${Date.now()}.log`);
    writeFileSync(file, output);
    t.comment(`full server output in ${file}`);
    t.comment(output.split('\n').filter((line) => !line.startsWith('{') || /"level":(50|60)/.test(line)).join('\n').slice(-6_000));
  }

  // Read-your-writes after recovery, and nothing acknowledged is lost.
  const fresh = await call('POST', '/users', { email: 'after@example.com', full_name: 'After Recovery' });
  t.equal(fresh.status, 200);
  t.equal((await call('GET', `/users/${fresh.body.user_id}`)).body.user?.full_name, 'After Recovery', 'a write after recovery is read back');
  const members = ((await call('GET', '/users')).body.members as Array<{ user_id: number }>).map((m) => m.user_id);
  t.same(acknowledged.filter((id) => !members.includes(id)), [], 'every acknowledged user is served');
  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  t.teardown(() => db.end());
  const inLog = new Set((await db.query("SELECT data->>'user_id' AS id FROM events WHERE type = 'UserCreated'")).rows.map((r) => Number(r.id)));
  t.same(acknowledged.filter((id) => !inLog.has(id)), [], 'every acknowledged user is in the log');

  // The queue registered before the outage is still valid and delivers every acknowledged user.
  const users = new Set<number>();
  let last = reg.body.last_event_id as number;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && [...acknowledged, fresh.body.user_id].some((id) => !users.has(id))) {
    const r = await call('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: last, dont_block: true });
    t.equal(r.status, 200, 'queue read');
    if (r.status !== 200) break;
    for (const event of r.body.events as Array<{ id: number; type: string; op?: string; person?: { user_id: number } }>) {
      if (event.type === 'realm_user' && event.op === 'add') users.add(event.person!.user_id);
      last = Math.max(last, event.id);
    }
    if ((r.body.events as unknown[]).length === 0) await new Promise((res) => setTimeout(res, 200));
  }
  t.same([...acknowledged, fresh.body.user_id].filter((id) => !users.has(id)), [], 'the old queue delivers every acknowledged user');

  // The queue long-polled across the outage delivers every acknowledged user as well (the rest of
  // its backlog read without blocking).
  const pollDeadline = Date.now() + 30_000;
  while (Date.now() < pollDeadline && acknowledged.some((id) => !polled.has(id))) {
    const r = await call('GET', '/events', { queue_id: pollQueue.body.queue_id, last_event_id: pollLast, dont_block: true });
    if (r.status !== 200) break;
    for (const event of r.body.events as Array<{ id: number; type: string; op?: string; person?: { user_id: number } }>) {
      if (event.type === 'realm_user' && event.op === 'add') polled.add(event.person!.user_id);
      pollLast = Math.max(pollLast, event.id);
    }
    if ((r.body.events as unknown[]).length === 0) await new Promise((res) => setTimeout(res, 200));
  }
  t.same(acknowledged.filter((id) => !polled.has(id)), [], 'the queue long-polled across the outage delivers every acknowledged user');
});
