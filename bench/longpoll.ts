/**
 * Long-poll delivery with 1,000 and 10,000 blocked GET /events (one queue per simulated client,
 * keep-alive connections on loopback), against a server process on PostgreSQL + NATS:
 *  (a) latency from a write's response to the waiting client's response, for an event for one user;
 *  (b) time until the last queue receives an event for everyone;
 *  (c) server resident memory per blocked queue: the resident set with n polls blocked less the resident set
 *      before any queue was registered, over n; read when they first block (as the floor is read), and again
 *      after a round of answering them all;
 * beside the floor: a bare fastify process holding the same number of requests and answering them
 * all at once. The server is compiled and runs as `npm start` runs it (bench/server-process.ts).
 * Writes bench/results/longpoll.json.
 */
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { createPlatform } from '../src/platform.js';
import { loadConfig } from '../src/config.js';
import { allProjections } from '../projections/index.js';
import { Role } from '../src/domain/roles.js';
import { generateApiKey } from '../src/services/secrets.js';
import { freshDatabase, percentile, writeResult, benchRoot } from './util.js';
import { freePort, loadAverage, sleep, startProcess, startServerProcess, stopProcess } from './server-process.js';
import { benchNatsStream } from './channel-members.js';

const SIZES = (process.env.LONGPOLL_SIZES ?? '1000,10000').split(',').map(Number);
/** Extra node options for the server process (BENCH_SERVER_NODE_ARGS), e.g. a heap setting to compare. */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

interface Reply { status: number; body: any }
function request(port: number, method: string, url: string, auth?: string, body?: string, attempt = 1): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent, headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
    } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => {
        try { resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }); } catch (e) { reject(e); }
      });
    });
    // A kept-alive socket the server closed while idle fails on reuse, and a burst of connects can
    // be reset by a full accept queue: retry on a fresh socket, a few times at most.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if ((error.code === 'ECONNRESET' || error.code === 'ETIMEDOUT') && attempt < 4) request(port, method, url, auth, body, attempt + 1).then(resolve, reject);
      else reject(error);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

/**
 * Live memory of a child after a full collection (bench/gc-on-signal.mjs): V8 heap in use plus memory
 * outside the heap held by JS objects, such as buffers. A secondary figure, read only after the
 * resident-set readings it would disturb: it says how much of the resident set is garbage.
 */
async function liveKiB(child: ChildProcess): Promise<number> {
  const file = memoryFiles.get(child)!;
  rmSync(file, { force: true });
  process.kill(child.pid!, 'SIGUSR2');
  for (let i = 0; !existsSync(file) && i < 100; i++) await sleep(50);
  const usage = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; external: number };
  return (usage.heapUsed + usage.external) / 1024;
}

const memoryFiles = new Map<ChildProcess, string>();
const perItem = (before: number, after: number, n: number) => Number(((after - before) / n).toFixed(2));
const gcOnSignal = ['--expose-gc', '--import', pathToFileURL(path.join(benchRoot, 'gc-on-signal.mjs')).href];

/** A benchmark child that writes its live memory on SIGUSR2: the floor (TypeScript) or our compiled server. */
async function startMeasured(start: (env: Record<string, string>) => Promise<ChildProcess>): Promise<ChildProcess> {
  const memoryFile = path.join(mkdtempSync(path.join(tmpdir(), 'bench-memory-')), 'memory.json');
  const child = await start({ BENCH_MEMORY_FILE: memoryFile });
  memoryFiles.set(child, memoryFile);
  return child;
}

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

async function measureFloor(n: number) {
  const port = freePort();
  const child = await startMeasured((env) => startProcess(gcOnSignal, 'bench/floor-server.ts', { ...env, PORT: String(port) }));
  try {
    await sleep(300);
    const idleRss = rssKiB(child.pid!);
    const polls: Array<Promise<number>> = [];
    for (let i = 0; i < n; i++) {
      const hold = () => request(port, 'GET', '/hold');
      polls.push(hold().catch(async () => (await sleep(100), hold())).then(() => performance.now()));
      if (i % 200 === 199) await sleep(20); // ramp up: a burst of 10,000 connects overflows the accept backlog
    }
    while ((await request(port, 'GET', '/held')).body.held < n) await sleep(50);
    const holdingRss = rssKiB(child.pid!);
    const holdingLive = await liveKiB(child);
    const released = performance.now();
    await request(port, 'GET', '/release');
    const done = await Promise.all(polls);
    await sleep(300);
    const idleLive = await liveKiB(child);
    return { fanout_ms: Number((Math.max(...done) - released).toFixed(1)), rss_per_held_request_kib: perItem(idleRss, holdingRss, n), live_per_held_request_kib: perItem(idleLive, holdingLive, n) };
  } finally {
    child.kill('SIGKILL');
  }
}

async function measureServer(n: number) {
  const database = await freshDatabase('bench_longpoll');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'longpoll-'));
  const natsStream = benchNatsStream();
  const env = { DATABASE_URL: database.url, NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222', NATS_STREAM: natsStream, DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', HEARTBEAT_SECONDS: '600', WEB_CONCURRENCY: '1' };
  const port = freePort();
  const child = await startMeasured((memory) => startServerProcess([...serverNodeArgs, ...gcOnSignal], { ...env, ...memory, PORT: String(port) }));
  try {
    // Simulated clients: n users created in bulk through the log (one append per 500 users).
    const platform = await createPlatform({ ...loadConfig(env), databaseUrl: database.url }, { projections: allProjections, startWorkers: false });
    const users: Array<{ id: number; auth: string }> = [];
    const realm = await platform.db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
    for (let start = 0; start < n; start += 500) {
      const appends = [];
      for (let i = start; i < Math.min(n, start + 500); i++) {
        const id = await platform.commands.nextId('user_id_seq');
        const key = generateApiKey();
        const email = `client${i}@example.com`;
        users.push({ id, auth: basic(email, key) });
        appends.push({ streamId: `user-${id}`, expectedVersion: -1, events: [{ type: 'UserCreated', data: {
          user_id: id, realm_id: realm.id, email, delivery_email: email, full_name: `Client ${i}`, role: Role.MEMBER, is_bot: false,
          bot_type: null, bot_owner_id: null, api_key: key, password_hash: null, timezone: '', date_joined: new Date().toISOString(), settings: realm.user_settings_defaults,
        } }] });
      }
      await platform.store.append(appends, { actor_id: null, realm_id: realm.id, client: 'bench', request_id: randomUUID(), time: new Date().toISOString() });
    }
    await platform.close();
    // Let the server's projection worker fold them (a request answers only after its own events).
    while ((await request(port, 'GET', `/api/v1/users/${users[n - 1]!.id}`, users[0]!.auth)).status !== 200) await sleep(200);

    // Resident memory per blocked queue counts from here: a blocked long-poll needs its queue registered.
    const rssBeforeQueues = rssKiB(child.pid!);
    console.log(`registering ${n} queues`);
    const queues: Array<{ queueId: string; lastId: number }> = [];
    for (let i = 0; i < n; i += 100) {
      const batch = await Promise.all(users.slice(i, i + 100).map((u) => request(port, 'POST', '/api/v1/register', u.auth, 'event_types=%5B%22user_settings%22%2C%22realm_user%22%5D&fetch_event_types=%5B%5D')));
      for (const r of batch) queues.push({ queueId: r.body.queue_id, lastId: r.body.last_event_id });
    }

    const arrivals = new Array<number>(n).fill(0);
    const inFlight = new Map<number, Promise<Reply>>();
    const failures: string[] = [];
    const getEvents = (i: number): Promise<Reply> => {
      const q = queues[i]!;
      return request(port, 'GET', `/api/v1/events?queue_id=${encodeURIComponent(q.queueId)}&last_event_id=${q.lastId}`, users[i]!.auth);
    };
    // A failed connection is retried (and counted): one lost socket must not end the run.
    const poll = (i: number) => {
      const p = getEvents(i)
        .catch(async (error: Error) => {
          failures.push(error.message);
          await sleep(100);
          return getEvents(i);
        })
        .then((r) => {
          arrivals[i] = performance.now();
          const events = r.body.events ?? [];
          if (events.length > 0) queues[i]!.lastId = events[events.length - 1].id;
          return r;
        });
      p.catch(() => undefined);
      inFlight.set(i, p);
      return p;
    };
    const blockAll = async () => {
      for (let i = 0; i < n; i++) {
        poll(i);
        if (i % 200 === 199) await sleep(20);
      }
      await sleep(Math.max(2_000, n / 2));
    };
    const ownerAuth = basic('owner@example.com', readFileSync(path.join(dataDir, 'zuliprc'), 'utf8').match(/key=(\S+)/)![1]!);
    const renameFirstUser = async (name: string) => {
      const renamed = await request(port, 'PATCH', `/api/v1/users/${users[0]!.id}`, ownerAuth, `full_name=${encodeURIComponent(name)}`);
      if (renamed.status !== 200) throw new Error(`PATCH /users failed: ${JSON.stringify(renamed.body)}`);
    };
    // Warm-up: block and release every queue once, so the idle reading is of a server that has
    // already served this many long-polls (pools, buffers and caches at their working size).
    console.log('warm-up: blocking and releasing every queue');
    await blockAll();
    // The first time n polls block, as the floor is read: from a server that has answered none of them.
    const firstBlockedRss = rssKiB(child.pid!);
    await renameFirstUser('Warm Up');
    await Promise.all(inFlight.values());
    await sleep(500);
    // Resident set as it is, never after a forced collection; live memory is read after the readings.
    await blockAll();
    const blockedRss = rssKiB(child.pid!);
    const blockedLive = await liveKiB(child);

    console.log('measuring');
    // (a) an event for one user: a setting change of that user.
    const latencies: number[] = [];
    const twentyFour = new Array<boolean>(n).fill(false);
    for (let k = 0; k < 200; k++) {
      const i = Math.floor(Math.random() * n);
      twentyFour[i] = !twentyFour[i];
      const waiting = inFlight.get(i)!;
      const write = await request(port, 'PATCH', '/api/v1/settings', users[i]!.auth, `twenty_four_hour_time=${twentyFour[i]}`);
      if (write.status !== 200) throw new Error(`PATCH /settings failed: ${JSON.stringify(write.body)}`);
      const wrote = performance.now();
      try {
        await waiting;
        latencies.push(Math.max(0, arrivals[i]! - wrote));
      } catch (error) {
        failures.push(`poll ${i}: ${(error as Error).message}`);
      }
      poll(i);
    }
    await sleep(200);

    // (b) an event for everyone: a name change is a realm_user update to every queue.
    arrivals.fill(0);
    const all = [...inFlight.values()];
    await renameFirstUser('Everyone Sees This');
    const wrote = performance.now();
    await Promise.allSettled(all);
    await sleep(500);
    const idleLive = await liveKiB(child);
    return {
      one_user_p50_ms: percentile(latencies, 50),
      one_user_p99_ms: percentile(latencies, 99),
      everyone_last_delivery_ms: Number((Math.max(...arrivals) - wrote).toFixed(1)),
      // What holding n blocked polls adds to the resident set, as an operator sees it: from before any queue
      // was registered to n polls blocked the first time (as the floor is read), and again after a round of
      // answering them all (what the heap grew to and kept, included).
      rss_per_blocked_queue_kib: perItem(rssBeforeQueues, firstBlockedRss, n),
      rss_per_blocked_queue_after_a_round_kib: perItem(rssBeforeQueues, blockedRss, n),
      server_rss_before_queues_mib: Math.round(rssBeforeQueues / 1024),
      live_per_blocked_queue_kib: perItem(idleLive, blockedLive, n),
      server_rss_mib: Math.round(blockedRss / 1024),
      connection_failures_retried: failures.length,
    };
  } finally {
    // Stopped cleanly, so a --cpu-prof in BENCH_SERVER_NODE_ARGS writes its profile.
    await stopProcess(child);
    await database.drop().catch(() => undefined);
  }
}

const results = [];
for (const n of SIZES) {
  console.log(`${n} queues: floor`);
  const floor = await measureFloor(n);
  console.log(`${n} queues: server`);
  const server = await measureServer(n);
  const row = { queues: n, ...server, floor_fanout_ms: floor.fanout_ms, floor_rss_per_held_request_kib: floor.rss_per_held_request_kib,
    floor_live_per_held_request_kib: floor.live_per_held_request_kib,
    everyone_vs_floor: Number((server.everyone_last_delivery_ms / Math.max(floor.fanout_ms, 0.1)).toFixed(2)) };
  console.log(JSON.stringify(row));
  results.push(row);
}
const file = writeResult('longpoll', { benchmark: 'longpoll', date: new Date().toISOString(), machine: { load_average_at_end: loadAverage() }, targets: { one_user_p99_ms: '<= 5 at 10,000 queues', everyone_vs_floor: '<= 1.2 at 1,000 queues, <= 1.5 at 10,000', rss_per_blocked_queue_kib: '<= 12 at 10,000 queues' }, results });
console.log(`written to ${file}`);
agent.destroy();
