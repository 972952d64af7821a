/**
 * Sends (issue 21): POST /messages to one channel of 100 subscribers from 1, 8 and 64 concurrent
 * senders, against a server process (WEB_CONCURRENCY=1) on PostgreSQL + NATS, over real HTTP;
 * beside the floor measured in the same run: a bare fastify process doing one INSERT per request on
 * the same database (bench/insert-floor-server.ts). Then GET /messages latency for a channel+topic
 * narrow (anchor newest, 100 messages) on 1,000,000 messages. Writes bench/results/messages.json.
 *
 *   npx tsx bench/messages.ts   (BENCH_SECONDS, BENCH_ROUNDS, BENCH_LEVELS, BENCH_MESSAGES, BENCH_GETS,
 *                                BENCH_LOG_LEVEL, BENCH_COMPARE_LOG_LEVEL, BENCH_SERVER_NODE_ARGS,
 *                                BENCH_BASELINE_DIR, BENCH_DATABASE_URL, BENCH_NATS_URL)
 *
 * Every server under test is its own process with its own database, data directory and NATS
 * stream, so the work a send leaves behind (folding, relaying to NATS) is done by the process that
 * took the send and shows in its CPU time. Users are created as an admin would (POST /users) and
 * fetch their own API keys (POST /fetch_api_key). Per level, the targets take turns (BENCH_ROUNDS
 * rounds of BENCH_SECONDS each, the order reversed every other round), so a change in the shared
 * machine's load colours all alike.
 *
 * BENCH_BASELINE_DIR: a checkout of another revision (with node_modules) run as one more target.
 * BENCH_COMPARE_LOG_LEVEL (e.g. warn): one more server of this revision at that log level, to
 * measure what request logging costs.
 *
 * The 1,000,000 messages for the read test are written straight into the read table with
 * generate_series: GET /messages reads only read tables, and folding a million log events first
 * would measure the projection runner instead.
 */
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
import { freshDatabase, percentile, throughput, writeResult } from './util.js';
import { cpuTicks, freePort, loadAverage, MS_PER_TICK, startProcess, startServerProcess, stopProcess } from './server-process.js';
import { closeConnections, request } from './http-client.js';
import { benchNatsStream, channelMembers, ownerAuthOf } from './channel-members.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LEVELS = (process.env.BENCH_LEVELS ?? '1,8,64').split(',').map(Number);
const SUBSCRIBERS = 100;
const SEED = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const GET_REQUESTS = Number(process.env.BENCH_GETS ?? 300);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const API = '/api/v1';

interface Target {
  name: string;
  child: ChildProcess;
  port: number;
  url: string;
  /** application_name of its database connections, to sum their CPU time. */
  app: string;
  dbPool: pg.Pool;
  users: Array<{ id: number; auth: string }>;
  streamId: number;
}

const cleanups: Array<() => Promise<unknown>> = [];
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A server process on a fresh database, with 100 members subscribed to one channel. */
async function startServer(name: string, logLevel: string, nodeArgs: string[], cwd?: string): Promise<Target> {
  const database = await freshDatabase('bench_messages');
  cleanups.push(() => database.drop());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-messages-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = freePort();
  const app = `bench-${name}`;
  const child = await startServerProcess(nodeArgs, {
    DATABASE_URL: database.url,
    NATS_URL: natsUrl,
    NATS_STREAM: benchNatsStream(),
    DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    RATE_LIMIT_PER_MINUTE: '0',
    WEB_CONCURRENCY: '1',
    PORT: String(port),
    PGAPPNAME: app,
  }, cwd);
  cleanups.push(() => stopProcess(child));
  const dbPool = new pg.Pool({ connectionString: database.url, max: 2 });
  cleanups.push(() => dbPool.end());
  const ownerAuth = ownerAuthOf(dataDir);

  console.log(`${name}: creating ${SUBSCRIBERS} members and a channel`);
  const { users, streamId } = await channelMembers(port, ownerAuth, SUBSCRIBERS);
  return { name, child, port, url: `${API}/messages`, app, dbPool, users, streamId };
}

function sendOnce(t: Target, w: number, i: number): Promise<void> {
  const body = new URLSearchParams({ type: 'stream', to: String(t.streamId), topic: `topic ${w % 10}`, content: `message ${i} from ${w} with **some** markdown` }).toString();
  return request(t.port, 'POST', t.url, t.users[w % t.users.length]!.auth, body).then((reply) => {
    if (reply.status !== 200) throw new Error(`${t.name} POST /messages: ${reply.status} ${reply.text}`);
  });
}

try {
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = await startServer('server', LOG_LEVEL, nodeArgs);
  const targets: Target[] = [server];
  const compareLevel = process.env.BENCH_COMPARE_LOG_LEVEL;
  if (compareLevel) targets.push(await startServer(`server-${compareLevel}`, compareLevel, []));
  const baselineDir = process.env.BENCH_BASELINE_DIR;
  if (baselineDir) targets.push(await startServer('baseline', LOG_LEVEL, [], baselineDir));
  const floorPort = freePort() + 1;
  const floorDatabase = (await server.dbPool.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
  const floorUrl = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  floorUrl.pathname = `/${floorDatabase}`;
  const floorChild = await startProcess([], 'bench/insert-floor-server.ts', { DATABASE_URL: floorUrl.toString(), PORT: String(floorPort), PGAPPNAME: 'bench-floor' });
  cleanups.push(() => stopProcess(floorChild));
  // The floor takes the same body and credentials as the server.
  targets.unshift({ ...server, name: 'floor', child: floorChild, port: floorPort, url: '/messages', app: 'bench-floor' });

  const backendPids = async (t: Target) =>
    (await t.dbPool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [t.app])).rows.map((r) => r.pid);
  const cpuOf = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuTicks(pid)]));
  // WAL flushes of the whole cluster (only the target of the round is busy). A busy backend reports
  // its counts at most once a second; an idle one reports what it still holds only after
  // PostgreSQL's idle interval (PGSTAT_IDLE_INTERVAL, 10 s). Read sooner, the last second of one
  // target's round would be counted in the next target's (the floor's ~1,000 flushes a second made
  // whoever came after it look twice as dear). One reading between two rounds serves both.
  const STATS_SETTLE_MS = 11_000;
  const walSyncs = async () => {
    await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
    return Number((await server.dbPool.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal')).rows[0]!.n);
  };

  console.log('warming up');
  for (const t of targets) await throughput(8, 2000, (w, i) => sendOnce(t, w, i));

  // Per target but the floor: its rows, one a level.
  const rows = new Map<string, Array<Record<string, unknown>>>();
  for (const senders of LEVELS) {
    const loadBefore = loadAverage();
    const figures = new Map(targets.map((t) => [t.name, { latencies: [] as number[], ops: 0, seconds: 0, cpuMs: 0, dbCpuMs: 0, walSyncs: 0, perRound: [] as number[] }]));
    let walMark = await walSyncs();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        const f = figures.get(t.name)!;
        const walBefore = walMark;
        const processBefore = cpuTicks(t.child.pid!);
        const dbBefore = cpuOf(await backendPids(t));
        const run = await throughput(senders, SECONDS * 1000, (w, i) => sendOnce(t, w, i));
        const processAfter = cpuTicks(t.child.pid!);
        const dbAfter = cpuOf(await backendPids(t));
        walMark = await walSyncs();
        f.walSyncs += walMark - walBefore;
        f.latencies.push(...run.latencies);
        f.ops += run.ops;
        f.seconds += run.ops / run.perSecond;
        f.perRound.push(run.perSecond);
        f.cpuMs += (processAfter - processBefore) * MS_PER_TICK;
        for (const [pid, ticks] of dbAfter) f.dbCpuMs += (ticks - (dbBefore.get(pid) ?? 0)) * MS_PER_TICK;
        console.log(`${senders} senders, round ${round + 1}: ${t.name} ${run.perSecond}/s p50 ${percentile(run.latencies, 50)} p99 ${percentile(run.latencies, 99)} ms (load ${loadAverage()[0]})`);
      }
    }
    const loadAfter = loadAverage();
    const summary = (name: string) => {
      const f = figures.get(name)!;
      return {
        messages_per_s: Math.round(f.ops / f.seconds),
        p50_ms: percentile(f.latencies, 50),
        p99_ms: percentile(f.latencies, 99),
        process_cpu_ms_per_send: Number((f.cpuMs / f.ops).toFixed(3)),
        database_cpu_ms_per_send: Number((f.dbCpuMs / f.ops).toFixed(3)),
        wal_flushes_per_send: Number((f.walSyncs / f.ops).toFixed(2)),
        per_s_by_round: f.perRound.join(' / '),
      };
    };
    const floor = summary('floor');
    // One flat row per level (docs/PERFORMANCE.md shows each list as a table).
    const rowOf = (name: string) => {
      const ours = summary(name);
      return {
        senders,
        ...ours,
        floor_per_s: floor.messages_per_s,
        floor_p50_ms: floor.p50_ms,
        floor_p99_ms: floor.p99_ms,
        floor_process_cpu_ms_per_send: floor.process_cpu_ms_per_send,
        floor_database_cpu_ms_per_send: floor.database_cpu_ms_per_send,
        floor_wal_flushes_per_send: floor.wal_flushes_per_send,
        floor_per_s_by_round: floor.per_s_by_round,
        ratio: Number((ours.messages_per_s / floor.messages_per_s).toFixed(2)),
        p99_ratio: Number((ours.p99_ms / floor.p99_ms).toFixed(2)),
        load_average_before: loadBefore.join(' / '),
        load_average_after: loadAfter.join(' / '),
      };
    };
    for (const t of targets) {
      if (t.name === 'floor') continue;
      const row = rowOf(t.name);
      rows.set(t.name, [...(rows.get(t.name) ?? []), row]);
      console.log(t.name, JSON.stringify(row));
    }
  }

  console.log(`seeding ${SEED} messages`);
  const pool = server.dbPool;
  const seedStarted = performance.now();
  const { realm_id: realmId, recipient_id: recipientId } = (await pool.query<{ realm_id: number; recipient_id: number }>(
    'SELECT realm_id, recipient_id FROM messages WHERE stream_id = $1 LIMIT 1', [server.streamId])).rows[0]!;
  const start = Number((await pool.query('SELECT max(id) AS m FROM messages')).rows[0].m ?? 0) + 1;
  const chunk = 200_000;
  for (let from = 0; from < SEED; from += chunk) {
    const count = Math.min(chunk, SEED - from);
    await pool.query(`
      INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
        is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
      SELECT $1::int + g, $2::int, $3::int, 'seed topic ' || (g % 100), $4::int, 1700000000 + g,
        'seeded message number ' || g, '<p>seeded message number ' || g || '</p>', $5::int, NULL, 'bench',
        false, false, false, false, false, false, NULL, NULL, 1
      FROM generate_series(0, $6::int - 1) AS g`,
    [start + from, realmId, server.streamId, server.users[0]!.id, recipientId, count]);
  }
  await pool.query(`SELECT setval('message_id_seq', $1::int)`, [start + SEED]);
  await pool.query('ANALYZE messages');
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const total = Number((await pool.query('SELECT count(*) AS n FROM messages')).rows[0].n);

  const reader = server.users[1]!;
  const latencies: number[] = [];
  for (let i = 0; i < GET_REQUESTS; i++) {
    const narrow = JSON.stringify([{ operator: 'channel', operand: server.streamId }, { operator: 'topic', operand: `seed topic ${i % 100}` }]);
    const url = `${API}/messages?${new URLSearchParams({ anchor: 'newest', num_before: '100', num_after: '0', narrow })}`;
    const t0 = performance.now();
    const reply = await request(server.port, 'GET', url, reader.auth);
    if (reply.status !== 200) throw new Error(`GET /messages: ${reply.status} ${reply.text}`);
    const body = JSON.parse(reply.text) as { messages: unknown[] };
    if (i >= 10) latencies.push(performance.now() - t0); // the first few warm the caches
    // Seed message g went to topic g % 100: a small BENCH_MESSAGES leaves fewer than 100 in a topic.
    const inTopic = Math.max(0, Math.ceil((SEED - (i % 100)) / 100));
    const expected = Math.min(100, inTopic);
    if (body.messages.length !== expected) throw new Error(`expected ${expected} messages, got ${body.messages.length}`);
  }
  const get = { messages_in_database: total, requests: latencies.length, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), load_average: loadAverage().join(' / ') };
  console.log(JSON.stringify(get));

  const file = writeResult(process.env.BENCH_RESULT_NAME ?? 'messages', {
    benchmark: 'messages',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length },
    setup: {
      request: 'POST /messages, type=stream to a channel of 100 subscribers, one of 10 topics, a line of Markdown',
      server: `one process per target (WEB_CONCURRENCY=1), each on its own database and NATS stream, LOG_LEVEL=${LOG_LEVEL} unless named, PostgreSQL + NATS, HTTP on 127.0.0.1, keep-alive clients`,
      floor: 'bare fastify process (form body), one INSERT ... RETURNING id per request on the server\'s database',
      measured: `per level, ${ROUNDS} rounds of ${SECONDS} s, ${targets.map((t) => t.name).join(', ')} taking turns (order reversed every other round)`,
      ...(baselineDir ? { baseline: baselineDir } : {}),
      seed_seconds: Number(seedSeconds.toFixed(1)),
    },
    targets: { ratio_at_64_senders: '>= 0.35', p99_ratio_at_8_senders: '<= 3', get_p99_ms_at_1m: '< 20' },
    send: rows.get('server'),
    ...Object.fromEntries([...rows].filter(([name]) => name !== 'server').map(([name, list]) => [name, list])),
    get,
  });
  console.log(`written to ${file}`);
} finally {
  closeConnections();
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
}
