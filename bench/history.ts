/**
 * History reads (issue 21): GET /messages for the newest 100 messages of one topic that holds
 * 100,000 messages, from 8 concurrent clients, against a server process (WEB_CONCURRENCY=1) on
 * PostgreSQL + NATS, over real HTTP; beside the floor measured in the same run: a bare fastify
 * process on the same database answering with one SQL query for the same 100 rows turned into JSON
 * (bench/history-floor-server.ts). Writes bench/results/history.json.
 *
 *   npx tsx bench/history.ts   (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CLIENTS, BENCH_TOPIC_MESSAGES,
 *                               BENCH_LOG_LEVEL, BENCH_SERVER_NODE_ARGS, BENCH_KEEP_DATABASE, BENCH_BASELINE_DIR,
 *                               BENCH_DATABASE_URL, BENCH_NATS_URL)
 *
 * BENCH_BASELINE_DIR: a checkout of another revision (with node_modules) whose server runs beside
 * this one on the same database and takes its turn in the same rounds: before/after figures from
 * one machine state.
 *
 * Besides the topic's messages, as many again go to other topics of the same channel and to another
 * channel, interleaved by id, so the topic's rows are not one contiguous run of the table; one in 40
 * of the topic's messages has a reaction. All are written straight into the read tables with
 * generate_series: GET /messages reads only read tables, and folding the log first would measure the
 * projection runner instead. Server and floor take turns (BENCH_ROUNDS rounds of BENCH_SECONDS
 * each), so a change in the shared machine's load colours both alike.
 */
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { freshDatabase, percentile, throughput, writeResult } from './util.js';
import { cpuTicks, freePort, loadAverage, MS_PER_TICK, sleep, startProcess, startServerProcess, stopProcess } from './server-process.js';
import { basic, callJson, closeConnections, request, type Reply } from './http-client.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const TOPIC_MESSAGES = Number(process.env.BENCH_TOPIC_MESSAGES ?? 100_000);
const SENDERS = 10;
const TOPIC = 'release planning';

const call = callJson;

const database = await freshDatabase('bench_history');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
const serverPort = freePort();
const floorPort = freePort() + 1;
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
const baselineDir = process.env.BENCH_BASELINE_DIR;
const baselinePort = freePort() + 2;
let server: ChildProcess | undefined;
let baseline: ChildProcess | undefined;
let floor: ChildProcess | undefined;
const pool = new pg.Pool({ connectionString: database.url, max: 2 });
try {
  const serverEnv = {
    DATABASE_URL: database.url,
    NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
    NATS_STREAM: `BENCH_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    RATE_LIMIT_PER_MINUTE: '0',
    WEB_CONCURRENCY: '1',
    PORT: String(serverPort),
    PGAPPNAME: 'bench-server',
  };
  server = await startServerProcess((process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), serverEnv);
  if (baselineDir) {
    // The same key-encryption key: both open the same database's data keys.
    const baselineData = mkdtempSync(path.join(os.tmpdir(), 'bench-history-baseline-'));
    copyFileSync(path.join(dataDir, 'data-key-secret'), path.join(baselineData, 'data-key-secret'));
    baseline = await startServerProcess([], { ...serverEnv, DATA_DIR: baselineData, PORT: String(baselinePort), PGAPPNAME: 'bench-baseline' }, baselineDir);
  }
  const api = '/api/v1';
  const ownerKey = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const ownerEmail = /email=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const ownerAuth = basic(ownerEmail, ownerKey);

  console.log(`creating ${SENDERS} members and two channels`);
  const members: Array<{ id: number; auth: string }> = [];
  for (let i = 0; i < SENDERS; i++) {
    const email = `member${i}@example.com`;
    const { user_id: id } = await call(serverPort, 'POST', `${api}/users`, ownerAuth, { email, full_name: `Member ${i}`, password: randomUUID() });
    const key = (await pool.query<{ api_key: string }>('SELECT api_key FROM users WHERE id = $1', [id])).rows[0]!.api_key;
    members.push({ id, auth: basic(email, key) });
  }
  for (const name of ['history', 'elsewhere']) {
    await call(serverPort, 'POST', `${api}/users/me/subscriptions`, ownerAuth, {
      subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify(members.map((m) => m.id)),
    });
    // One message through the API gives the channel its recipient id.
    await call(serverPort, 'POST', `${api}/messages`, members[0]!.auth, { type: 'stream', to: name, topic: 'hello', content: 'hello' });
  }
  const channel = async (name: string) => (await pool.query<{ stream_id: number; recipient_id: number; realm_id: number }>(
    'SELECT stream_id, recipient_id, realm_id FROM messages WHERE stream_id = (SELECT id FROM streams WHERE name = $1) LIMIT 1', [name])).rows[0]!;
  const history = await channel('history');
  const elsewhere = await channel('elsewhere');

  console.log(`seeding ${TOPIC_MESSAGES} messages in one topic and ${TOPIC_MESSAGES} elsewhere`);
  const seedStarted = performance.now();
  const start = Number((await pool.query('SELECT max(id) AS m FROM messages')).rows[0].m) + 1;
  const total = TOPIC_MESSAGES * 2;
  const senderIds = `ARRAY[${members.map((m) => m.id).join(',')}]`;
  for (let from = 0; from < total; from += 100_000) {
    const to = Math.min(total, from + 100_000) - 1;
    // Even offsets: the measured topic; odd: 20 other topics of the channel and of another channel.
    await pool.query(`
      INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
        is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
      SELECT $1::int + g, $2::int,
        CASE WHEN g % 2 = 0 OR g % 4 = 1 THEN $3::int ELSE $4::int END,
        CASE WHEN g % 2 = 0 THEN $5::text ELSE 'other topic ' || (g % 20) END,
        (${senderIds})[1 + (g / 2) % ${SENDERS}], 1700000000 + g,
        'Message ' || g || ': the **draft** for the next release is ready, see the notes and say what is missing.',
        '<p>Message ' || g || ': the <strong>draft</strong> for the next release is ready, see the notes and say what is missing.</p>',
        CASE WHEN g % 2 = 0 OR g % 4 = 1 THEN $6::int ELSE $7::int END, NULL, 'bench',
        false, false, false, false, false, false, NULL, NULL, 1
      FROM generate_series($8::int, $9::int) AS g`,
    [start, history.realm_id, history.stream_id, elsewhere.stream_id, TOPIC, history.recipient_id, elsewhere.recipient_id, from, to]);
  }
  await pool.query(`
    INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type, position)
    SELECT $1::int + g, $2::int, 'thumbs_up', '1f44d', 'unicode_emoji', g FROM generate_series(0, $3::int - 1, 80) AS g`,
  [start, members[1]!.id, total]);
  await pool.query(`SELECT setval('message_id_seq', $1::int)`, [start + total]);
  await pool.query('ANALYZE');
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  floor = await startProcess([], 'bench/history-floor-server.ts', { DATABASE_URL: database.url, PORT: String(floorPort), PGAPPNAME: 'bench-floor' });

  const reader = members[2]!;
  const narrow = JSON.stringify([{ operator: 'channel', operand: history.stream_id }, { operator: 'topic', operand: TOPIC }]);
  const serverUrl = `${api}/messages?${new URLSearchParams({ anchor: 'newest', num_before: '100', num_after: '0', narrow })}`;
  const floorUrl = `/messages?${new URLSearchParams({ realm_id: String(history.realm_id), stream_id: String(history.stream_id), topic: TOPIC })}`;
  const get = (port: number) => async () => {
    const reply = await request(port, 'GET', serverUrl, reader.auth);
    if (reply.status !== 200) throw new Error(`GET /messages: ${reply.status} ${reply.text}`);
    return reply;
  };
  const ours = get(serverPort);
  const before = get(baselinePort);
  const theirs = async () => {
    const reply = await request(floorPort, 'GET', floorUrl);
    if (reply.status !== 200) throw new Error(`floor: ${reply.status} ${reply.text}`);
    return reply;
  };
  // Both answer with the same 100 rows.
  const ourIds = (JSON.parse((await ours()).text).messages as Array<{ id: number }>).map((m) => m.id);
  const floorIds = (JSON.parse((await theirs()).text).messages as Array<{ id: number }>).map((m) => m.id);
  if (ourIds.length !== 100 || ourIds.join() !== floorIds.join()) throw new Error(`the server and the floor disagree: ${ourIds.length} vs ${floorIds.length} rows`);
  if (baseline && (await before()).text !== (await ours()).text) throw new Error('the baseline answers with other bytes');
  const responseBytes = { server: Buffer.byteLength((await ours()).text), floor: Buffer.byteLength((await theirs()).text) };

  interface Target { name: string; call: () => Promise<Reply>; pid: number; app: string; latencies: number[]; ops: number; seconds: number; cpuMs: number; dbCpuMs: number }
  const target = (name: string, call: () => Promise<Reply>, child: ChildProcess, app: string): Target =>
    ({ name, call, pid: child.pid!, app, latencies: [], ops: 0, seconds: 0, cpuMs: 0, dbCpuMs: 0 });
  const targets = [
    target('floor', theirs, floor, 'bench-floor'),
    target('server', ours, server, 'bench-server'),
    ...(baseline ? [target('baseline', before, baseline, 'bench-baseline')] : []),
  ];
  console.log('warming up');
  for (const t of targets) await throughput(CLIENTS, 2000, async () => void (await t.call()));

  // CPU time per request, of the process and of its database backends: unlike latency, it hardly
  // depends on what else the shared machine is doing.
  const backendPids = async (app: string) =>
    (await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [app])).rows.map((r) => r.pid);
  const cpuOf = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuTicks(pid)]));
  const loadBefore = loadAverage();
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const processBefore = cpuTicks(t.pid);
      const dbBefore = cpuOf(await backendPids(t.app));
      const run = await throughput(CLIENTS, SECONDS * 1000, async () => void (await t.call()));
      const processAfter = cpuTicks(t.pid);
      const dbAfter = cpuOf(await backendPids(t.app));
      t.latencies.push(...run.latencies);
      t.ops += run.ops;
      t.seconds += run.ops / run.perSecond;
      t.cpuMs += (processAfter - processBefore) * MS_PER_TICK;
      for (const [pid, ticks] of dbAfter) t.dbCpuMs += (ticks - (dbBefore.get(pid) ?? 0)) * MS_PER_TICK;
      console.log(`round ${round + 1}: ${t.name} p50 ${percentile(run.latencies, 50)} p99 ${percentile(run.latencies, 99)} ms, ${run.perSecond} req/s`);
    }
  }
  const loadAfter = loadAverage();
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  const [floorTarget, serverTarget, baselineTarget] = targets as [Target, Target, Target | undefined];
  const figuresOf = (t: Target) => ({
    p50_ms: percentile(t.latencies, 50),
    p99_ms: percentile(t.latencies, 99),
    requests_per_s: Math.round(t.ops / t.seconds),
    process_cpu_ms_per_request: Number((t.cpuMs / t.ops).toFixed(3)),
    database_cpu_ms_per_request: Number((t.dbCpuMs / t.ops).toFixed(3)),
  });
  const versusFloor = (t: Target) => {
    const ours = figuresOf(t);
    const floorFigures = figuresOf(floorTarget);
    return {
      clients: CLIENTS,
      ...ours,
      floor_p50_ms: floorFigures.p50_ms,
      floor_p99_ms: floorFigures.p99_ms,
      floor_requests_per_s: floorFigures.requests_per_s,
      floor_process_cpu_ms_per_request: floorFigures.process_cpu_ms_per_request,
      floor_database_cpu_ms_per_request: floorFigures.database_cpu_ms_per_request,
      p50_ratio: ratio(ours.p50_ms, floorFigures.p50_ms),
      p99_ratio: ratio(ours.p99_ms, floorFigures.p99_ms),
    };
  };
  const result = {
    benchmark: 'history',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_before: loadBefore.join(' / '), load_average_after: loadAfter.join(' / ') },
    setup: {
      request: 'GET /messages anchor=newest num_before=100 num_after=0, narrow channel + topic, apply_markdown default',
      messages_in_topic: TOPIC_MESSAGES,
      messages_elsewhere: TOPIC_MESSAGES,
      reactions: 'one in 40 messages',
      server: `one process (WEB_CONCURRENCY=1), LOG_LEVEL=${logLevel}, PostgreSQL + NATS, HTTP on 127.0.0.1`,
      floor: 'bare fastify process, one SQL query for the same 100 rows, JSON-encoded',
      response_bytes: `${responseBytes.server} (floor ${responseBytes.floor})`,
      measured: `${ROUNDS} rounds of ${SECONDS} s each, ${targets.map((t) => t.name).join(', ')} taking turns`,
      seed_seconds: Number(seedSeconds.toFixed(1)),
    },
    targets: { p50_ratio: '<= 2', p99_ratio: '<= 1.2' },
    get: [versusFloor(serverTarget)],
    ...(baselineTarget ? { baseline: [{ revision: baselineDir, ...versusFloor(baselineTarget) }] } : {}),
  };
  console.log(JSON.stringify(result.get[0]));
  console.log(`written to ${writeResult(process.env.BENCH_RESULT_NAME ?? 'history', result)}`);
} finally {
  closeConnections();
  if (floor) await stopProcess(floor);
  if (baseline) await stopProcess(baseline);
  if (server) await stopProcess(server);
  await pool.end();
  // BENCH_KEEP_DATABASE=1 keeps it for EXPLAIN and other looks after the run.
  if (process.env.BENCH_KEEP_DATABASE) console.log(`database kept: ${database.url}`);
  else await database.drop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
}
