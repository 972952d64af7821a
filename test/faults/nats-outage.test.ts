/**
 * NATS stopped for several seconds under load, then started again (issue 9). Two server processes
 * share a private PostgreSQL and NATS: writes go through A, long-polls block on B, so B can only
 * learn of A's writes through NATS wake-ups or its own fallback. Writes must keep succeeding, every
 * long-poll must receive every event in order exactly once, and the relay must catch up with each
 * event_id in JetStream exactly once.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connect, AckPolicy, DeliverPolicy } from 'nats';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';

t.setTimeout(170_000);

const OUTAGE_MS = 5_000;

t.test('NATS outage during load', async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-nats-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const servers: ChildServer[] = [];
  t.teardown(async () => {
    for (const server of servers) await killHard(server);
  });
  process.once('exit', () => servers.forEach((server) => server.process.kill('SIGKILL')));
  const env = (port: number) => ({
    DATA_DIR: dataDir,
    PORT: String(port),
    DATABASE_URL: postgres.url,
    NATS_URL: nats.url,
    NATS_STREAM: 'FAULTS',
    HEARTBEAT_SECONDS: '2',
  });
  const portA = await freePort();
  const portB = await freePort();
  servers.push(await startChildServer(env(portA)));
  servers.push(await startChildServer(env(portB)));
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const viaA = client(servers[0]!.url, 'owner@example.com', key);
  const viaB = client(servers[1]!.url, 'owner@example.com', key);

  // Three queues on B, each drained by a blocking long-poll loop.
  interface Received {
    ids: number[];
    users: number[];
    errors: string[];
  }
  let draining = true;
  const received: Received[] = [];
  const loops: Array<Promise<void>> = [];
  for (let q = 0; q < 3; q++) {
    const reg = await viaB('POST', '/register', { event_types: ['realm_user'] });
    t.equal(reg.status, 200, `queue ${q} registered`);
    const mine: Received = { ids: [], users: [], errors: [] };
    received.push(mine);
    loops.push(
      (async () => {
        let last = reg.body.last_event_id as number;
        while (draining) {
          try {
            const r = await viaB('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: last });
            if (r.status !== 200) {
              mine.errors.push(`${r.status} ${JSON.stringify(r.body)}`);
              await new Promise((res) => setTimeout(res, 200));
              continue;
            }
            for (const event of r.body.events as Array<{ id: number; type: string; op?: string; person?: { user_id: number } }>) {
              mine.ids.push(event.id);
              if (event.type === 'realm_user' && event.op === 'add') mine.users.push(event.person!.user_id);
              last = Math.max(last, event.id);
            }
          } catch (error) {
            mine.errors.push(String(error));
          }
        }
      })(),
    );
  }

  const acknowledged: number[] = [];
  // When each write started and ended (ms since the load began), for the report if one stalls.
  const began = Date.now();
  const timings: Array<[number, number]> = [];
  let outageWindow: [number, number] = [0, 0];
  let duringOutage = 0;
  let outage = false;
  const failures: string[] = [];
  let writing = true;
  let n = 0;
  const writer = async (w: number) => {
    while (writing) {
      n += 1;
      const start = Date.now() - began;
      const r = await viaA('POST', '/users', { email: `nats${w}-${n}@example.com`, full_name: `Nats ${w} ${n}` }).catch((e) => ({ status: 0, body: String(e), ms: 0 }));
      timings.push([start, Date.now() - began]);
      if (r.status === 200) {
        acknowledged.push(r.body.user_id);
        if (outage) duringOutage += 1;
      } else failures.push(`${r.status} ${JSON.stringify(r.body)}`);
    }
  };
  const writers = Array.from({ length: 3 }, (_, w) => writer(w));
  await new Promise((r) => setTimeout(r, 1_500));
  const stopping = Date.now() - began;
  await nats.stop();
  outage = true;
  outageWindow = [Date.now() - began, 0];
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  outage = false;
  outageWindow[1] = Date.now() - began;
  await nats.start();
  await new Promise((r) => setTimeout(r, 1_500));
  writing = false;
  await Promise.all(writers);

  const slowest = [...timings].sort((a, b) => b[1] - b[0] - (a[1] - a[0])).slice(0, 5);
  t.comment(`NATS stop asked at ${stopping} ms, down ${outageWindow[0]}-${outageWindow[1]} ms; slowest writes [start, end]: ${JSON.stringify(slowest)}`);
  const ok = t.ok(duringOutage > 0, `${duringOutage} writes acknowledged while NATS was down (${acknowledged.length} in all)`);
  if (!ok) t.comment(`server A said:\n${servers[0]!.output().slice(-4_000)}\nserver B said:\n${servers[1]!.output().slice(-4_000)}`);
  t.same(failures, [], 'no write failed');

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  t.teardown(() => db.end());
  // User ids are handed out before commit, so the log's order (not id order) is the order to expect.
  const logOrder = (await db.query("SELECT data->>'user_id' AS id FROM events WHERE type = 'UserCreated' ORDER BY position")).rows
    .map((row) => Number(row.id))
    .filter((id) => acknowledged.includes(id));

  // Every queue catches up, bounded in time.
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline && received.some((r) => acknowledged.some((id) => !r.users.includes(id)))) await new Promise((r) => setTimeout(r, 200));
  draining = false;
  await Promise.all(loops);
  for (const [q, r] of received.entries()) {
    t.same(acknowledged.filter((id) => !r.users.includes(id)), [], `queue ${q}: every acknowledged user arrived`);
    t.equal(new Set(r.users).size, r.users.length, `queue ${q}: each exactly once`);
    t.ok(r.ids.every((id, i) => i === 0 || id > r.ids[i - 1]!), `queue ${q}: event ids strictly increasing`);
    t.same(r.users.filter((id) => acknowledged.includes(id)), logOrder, `queue ${q}: in the order of the log`);
    t.same(r.errors, [], `queue ${q}: no long-poll failed`);
  }

  // The relay catches up: JetStream holds each event of the log once.
  const total = Number((await db.query('SELECT count(*) AS n FROM events')).rows[0].n);
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  const relayDeadline = Date.now() + 30_000;
  let stored = 0;
  while (Date.now() < relayDeadline) {
    stored = (await jsm.streams.info('FAULTS')).state.messages;
    if (stored >= total) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(stored, total, `JetStream holds ${stored} of ${total} events`);
  await jsm.consumers.add('FAULTS', { durable_name: 'faults', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
  const consumer = await nc.jetstream().consumers.get('FAULTS', 'faults');
  const ids = new Set<string>();
  let count = 0;
  const messages = await consumer.fetch({ max_messages: total + 50, expires: 3_000 });
  for await (const msg of messages) {
    ids.add(msg.json<{ event_id: string }>().event_id);
    count += 1;
    if (count === total) break;
  }
  const logIds = new Set((await db.query('SELECT event_id FROM events')).rows.map((r) => String(r.event_id)));
  t.equal(count, total, 'every event was relayed');
  t.equal(ids.size, count, 'no event_id twice');
  t.same([...logIds].filter((id) => !ids.has(id)), [], 'each event of the log is in JetStream');
  t.ok(servers[0]!.process.exitCode === null && servers[0]!.process.signalCode === null, 'server A is still up');
  t.ok(servers[1]!.process.exitCode === null && servers[1]!.process.signalCode === null, 'server B is still up');
});
