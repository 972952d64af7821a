/**
 * Two server processes on one PostgreSQL + NATS (issue 9): writes through both, a queue registered
 * on one read through the other, then the first is killed -9 mid-load. The survivor takes over the
 * projection workers (its writes keep succeeding, since each waits for its projections), serves every
 * acknowledged write, and the queue registered on the dead node delivers everything exactly once.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';

t.setTimeout(170_000);

const REQUEST_BOUND_MS = 15_000;

t.test('one of two nodes killed mid-load', async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-node-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const servers: ChildServer[] = [];
  t.teardown(async () => {
    for (const server of servers) await killHard(server);
  });
  process.once('exit', () => servers.forEach((server) => server.process.kill('SIGKILL')));
  const env = async () => ({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    DATABASE_URL: postgres.url,
    NATS_URL: nats.url,
    NATS_STREAM: 'FAULTS',
    HEARTBEAT_SECONDS: '2',
  });
  // A starts first, so it is the one holding the projection workers when it dies.
  const a = await startChildServer(await env());
  servers.push(a);
  const b = await startChildServer(await env());
  servers.push(b);
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const viaA = client(a.url, 'owner@example.com', key, REQUEST_BOUND_MS + 10_000);
  const viaB = client(b.url, 'owner@example.com', key, REQUEST_BOUND_MS + 10_000);

  const reg = await viaA('POST', '/register', { event_types: ['realm_user'] });
  t.equal(reg.status, 200, 'queue registered on A');

  const acknowledged: number[] = [];
  const survivorProblems: string[] = [];
  let killed = false;
  let afterKill = 0;
  let running = true;
  let n = 0;
  const writer = async (node: 'a' | 'b', w: number) => {
    const call = node === 'a' ? viaA : viaB;
    while (running) {
      if (node === 'a' && killed) return;
      n += 1;
      try {
        const r = await call('POST', '/users', { email: `${node}${w}-${n}@example.com`, full_name: `Node ${node} ${n}` });
        if (r.status === 200) {
          acknowledged.push(r.body.user_id);
          if (node === 'b' && killed) afterKill += 1;
        }
        if (node === 'b' && (r.status !== 200 || r.ms > REQUEST_BOUND_MS)) survivorProblems.push(`${r.status} after ${r.ms} ms: ${JSON.stringify(r.body).slice(0, 200)}`);
      } catch (error) {
        // A's connections die with it: those writes were never acknowledged.
        if (node === 'b') survivorProblems.push(String(error));
      }
    }
  };
  const load = [writer('a', 0), writer('a', 1), writer('b', 0), writer('b', 1)];
  await new Promise((r) => setTimeout(r, 2_000));
  await killHard(a);
  killed = true;
  const killedAt = Date.now();
  await new Promise((r) => setTimeout(r, 4_000));
  running = false;
  await Promise.all(load);

  t.ok(afterKill > 0, `${afterKill} writes through B acknowledged in the ${Date.now() - killedAt} ms after A died (${acknowledged.length} in all)`);
  t.same(survivorProblems, [], 'every write through B succeeded within the bound');
  t.ok(b.process.exitCode === null && b.process.signalCode === null, 'B is still up');

  const members = ((await viaB('GET', '/users')).body.members as Array<{ user_id: number }>).map((m) => m.user_id);
  t.same(acknowledged.filter((id) => !members.includes(id)), [], 'B serves every acknowledged user, from either node');

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  t.teardown(() => db.end());
  const logOrder = (await db.query("SELECT data->>'user_id' AS id FROM events WHERE type = 'UserCreated' ORDER BY position")).rows
    .map((row) => Number(row.id))
    .filter((id) => acknowledged.includes(id));
  t.equal(logOrder.length, acknowledged.length, 'every acknowledged user is in the log');

  // The queue registered on A, read through B.
  const users: number[] = [];
  const outOfOrder: number[] = [];
  let last = reg.body.last_event_id as number;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && acknowledged.some((id) => !users.includes(id))) {
    const r = await viaB('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: last, dont_block: true });
    if (!t.equal(r.status, 200, 'the queue reads through B')) break;
    for (const event of r.body.events as Array<{ id: number; type: string; op?: string; person?: { user_id: number } }>) {
      if (event.id <= last) outOfOrder.push(event.id);
      if (event.type === 'realm_user' && event.op === 'add') users.push(event.person!.user_id);
      last = Math.max(last, event.id);
    }
    if ((r.body.events as unknown[]).length === 0) await new Promise((res) => setTimeout(res, 200));
  }
  t.same(outOfOrder, [], 'event ids only increase');
  t.same(users.filter((id) => acknowledged.includes(id)), logOrder, 'the queue delivers every acknowledged user once, in log order');
});
