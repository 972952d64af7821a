/**
 * Widgets and bot storage under load (issue 25), against a server process (WEB_CONCURRENCY=1) on
 * PostgreSQL + NATS, run as production runs it (compiled, bench/server-process.ts), measured over
 * real HTTP from this process, as a client sees it:
 *  - a `/poll` with 5 options and one vote (POST /submessage) from each of 50 users, 10 at a time:
 *    p50/p99 per vote (a fresh poll each round);
 *  - a bot writing its storage (PUT /bot_storage) at 100/s alone: p50/p99 and the server's CPU per PUT;
 *  - a bot sending 100 messages/s and doing one PUT /bot_storage per message: p50/p99 of the PUT;
 *  - other users' sends at a steady rate, alone and then while the bot runs, in the same round.
 * Each phase probes GET /health/live on the same server (no authentication, no database: the
 * floor any request waits for) and records the load average and the server process's CPU time.
 * Users, the bot and the channel are made through the API, as an administrator would.
 * Writes bench/results/widgets.json.
 *
 *   npx tsx bench/widgets.ts   (BENCH_SECONDS, BENCH_ROUNDS, BENCH_BOT_RATE, BENCH_LOG_LEVEL,
 *                               BENCH_SERVER_NODE_ARGS, BENCH_BASELINE_DIR, BENCH_DATABASE_URL, BENCH_NATS_URL)
 *
 * BENCH_SERVER_NODE_ARGS: node flags for the server under test, e.g. a CPU profile of it:
 *   BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/widgets-prof" npx tsx bench/widgets.ts
 * BENCH_BASELINE_DIR: a checkout of another revision (with node_modules) whose server runs on a
 * database and NATS stream of its own; the two take turns, phase by phase, in every round, so
 * before/after figures come from one machine state.
 */
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { freshDatabase, percentile, writeResult } from './util.js';
import { cpuTicks, freePort, loadAverage, MS_PER_TICK, startServerProcess, stopProcess } from './server-process.js';
import { basic, closeConnections, request } from './http-client.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const VOTERS = 50;
const VOTES_AT_ONCE = 10;
const BOT_RATE = Number(process.env.BENCH_BOT_RATE ?? 100);
const OTHERS_RATE = 20;
const FLOOR_RATE = 10;
const API = '/api/v1';
const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);


/** One API call: its JSON answer and how long it took, or an error for any status but 200. */
async function call(port: number, method: string, url: string, auth?: string, body?: Record<string, string>): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const reply = await request(port, method, url, auth, body ? new URLSearchParams(body).toString() : undefined);
  const ms = performance.now() - started;
  if (reply.status !== 200) throw new Error(`${method} ${url}: ${reply.status} ${reply.text}`);
  return { ms, json: JSON.parse(reply.text) };
}


let errors = 0;
let firstError = '';
const serverErrors: string[] = [];

/** Runs `task` every 1000/rate ms for `seconds` (open loop: a slow answer does not delay the next start). */
async function atRate(rate: number, seconds: number, task: (i: number) => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  const pending: Array<Promise<void>> = [];
  const started = performance.now();
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // A failed request is counted, not fatal: an overloaded machine resets connections.
    pending.push(task(i).then((ms) => void latencies.push(ms), (error: Error) => {
      errors += 1;
      firstError ||= String(error.message);
    }));
  }
  await Promise.all(pending);
  return latencies;
}

interface Target {
  name: string;
  port: number;
  child: ChildProcess;
  app: string;
  pool: pg.Pool;
  ownerAuth: string;
  voters: Array<{ id: number; auth: string }>;
  botAuth: string;
  polls: number;
}

interface Phase { name: string; latencies: number[]; floor: number[]; requests: number; cpuMs: number; dbCpuMs: number; loads: string[] }
const phase = (name: string): Phase => ({ name, latencies: [], floor: [], requests: 0, cpuMs: 0, dbCpuMs: 0, loads: [] });

/** A server process on a database and NATS stream of its own, with 50 members, a bot and a channel. */
async function startTarget(name: string, dir: string | undefined, nodeArgs: string[]): Promise<{ target: Target; cleanup: () => Promise<void> }> {
  const database = await freshDatabase(`bench_widgets_${name}`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `bench-widgets-${name}-`));
  const port = freePort();
  const app = `bench-${name}`;
  const child = await startServerProcess(nodeArgs, {
    DATABASE_URL: database.url,
    NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
    NATS_STREAM: `BENCH_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    WEB_CONCURRENCY: '1',
    PORT: String(port),
    PGAPPNAME: app,
  }, dir);
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  // Error log lines (pino level 50 and up) are kept to be shown at the end: a 500's cause.
  child.stdout!.on('data', (d: Buffer) => {
    for (const line of String(d).split('\n')) if (/"level":[56]0/.test(line) && serverErrors.length < 20) serverErrors.push(`${name}: ${line.slice(0, 2000)}`);
  });
  const cleanup = async () => {
    await stopProcess(child);
    await pool.end();
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const zuliprc = readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
    const ownerAuth = basic(/email=(\S+)/.exec(zuliprc)![1]!, /key=(\S+)/.exec(zuliprc)![1]!);
    console.log(`${name}: creating ${VOTERS} members, a bot and a channel`);
    const voters: Target['voters'] = [];
    for (let i = 0; i < VOTERS; i++) {
      const email = `voter${i}@example.com`;
      const password = randomUUID();
      await call(port, 'POST', `${API}/users`, ownerAuth, { email, full_name: `Voter ${i}`, password });
      // The member's own client logs in with the password the administrator gave it.
      const { json } = await call(port, 'POST', `${API}/fetch_api_key`, undefined, { username: email, password });
      voters.push({ id: json.user_id, auth: basic(json.email, json.api_key) });
    }
    const bot = (await call(port, 'POST', `${API}/bots`, ownerAuth, { full_name: 'Keeper', short_name: 'keeper', bot_type: '1' })).json;
    const listed = (await call(port, 'GET', `${API}/bots`, ownerAuth)).json.bots as Array<{ username: string; api_key: string }>;
    const botEmail = listed.find((b) => b.api_key === bot.api_key)!.username;
    await call(port, 'POST', `${API}/users/me/subscriptions`, ownerAuth, {
      subscriptions: JSON.stringify([{ name: 'bench' }]),
      principals: JSON.stringify([...voters.map((u) => u.id), bot.user_id]),
    });
    return { target: { name, port, child, app, pool, ownerAuth, voters, botAuth: basic(botEmail, bot.api_key), polls: 0 }, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** CPU ticks of the target's process and of its database backends (by application name). */
async function cpuOf(t: Target): Promise<{ process: number; db: Map<number, number> }> {
  const { rows } = await t.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [t.app]);
  return { process: cpuTicks(t.child.pid!), db: new Map(rows.map((r) => [r.pid, cpuTicks(r.pid)])) };
}

/** Runs `body` as one measured stretch of `into`: CPU, load and floor probes (unless `probe` is false) around it. */
async function measured(t: Target, into: Phase, seconds: number, body: () => Promise<number>, probe = true): Promise<void> {
  const before = await cpuOf(t);
  const started = process.hrtime.bigint();
  into.loads.push(loadAverage()[0]!.toFixed(2));
  const [requests] = await Promise.all([
    body(),
    probe ? atRate(FLOOR_RATE, seconds, async () => {
      const { ms } = await call(t.port, 'GET', '/health/live');
      into.floor.push(ms);
      return ms;
    }) : Promise.resolve([]),
  ]);
  const after = await cpuOf(t);
  // The monotonic clock a server's --cpu-prof samples carry: a profile can be cut to one phase.
  if (nodeArgs.length > 0) console.log(`phase ${t.name} ${into.name} ${started / 1000n} ${process.hrtime.bigint() / 1000n} us`);
  into.requests += requests;
  into.cpuMs += (after.process - before.process) * MS_PER_TICK;
  for (const [pid, ticks] of after.db) into.dbCpuMs += (ticks - (before.db.get(pid) ?? 0)) * MS_PER_TICK;
}

/** A fresh poll, then one vote from each voter, VOTES_AT_ONCE at a time. */
async function votePhase(t: Target, into: Phase): Promise<void> {
  const poll = await call(t.port, 'POST', `${API}/messages`, t.voters[0]!.auth, {
    type: 'stream', to: 'bench', topic: `poll ${t.polls++}`, content: '/poll Where do we meet?\n- Kitchen\n- Roof\n- Lobby\n- Park\n- Online',
  });
  // A vote takes some ms: probing the floor for 1 s covers the phase on a quiet machine.
  await measured(t, into, 1, async () => {
    for (let start = 0; start < VOTERS; start += VOTES_AT_ONCE) {
      await Promise.all(t.voters.slice(start, start + VOTES_AT_ONCE).map(async (u, k) => {
        const { ms } = await call(t.port, 'POST', `${API}/submessage`, u.auth, {
          message_id: String(poll.json.id), msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: `canned,${(start + k) % 5}`, vote: 1 }),
        });
        into.latencies.push(ms);
      }));
    }
    return VOTERS;
  });
  const { rows } = await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM submessages WHERE message_id = $1 AND content LIKE '%\"vote\"%'", [poll.json.id]);
  if (Number(rows[0]!.n) !== VOTERS) throw new Error(`${t.name}: ${rows[0]!.n} of ${VOTERS} votes stored`);
}

/**
 * PUT /bot_storage once per `i`, one at a time: a bot's state handler writes one update at a time
 * (zulip_bots does), so its PUTs queue behind each other; each is timed from its own start.
 */
function storageWriter(t: Target, into: number[]) {
  let previous: Promise<unknown> = Promise.resolve();
  return async (i: number) => {
    const put = previous.then(() => call(t.port, 'PUT', `${API}/bot_storage`, t.botAuth, { storage: JSON.stringify({ count: String(i), [`k${i % 50}`]: `v${i}` }) }));
    previous = put.catch(() => undefined);
    const { ms } = await put;
    into.push(ms);
    return ms;
  };
}

const otherSend = (t: Target) => (i: number) =>
  call(t.port, 'POST', `${API}/messages`, t.voters[1 + (i % (VOTERS - 1))]!.auth, { type: 'stream', to: 'bench', topic: `chat ${i % 5}`, content: `message ${i} with **markdown**` })
    .then((r) => r.ms);

interface Figures { votes: Phase; putsAlone: Phase; othersAlone: Phase; botPhase: Phase; puts: number[]; botSends: number[]; othersWithBot: number[] }
const figuresFor = (): Figures => ({ votes: phase('votes'), putsAlone: phase('puts-alone'), othersAlone: phase('others-alone'), botPhase: phase('bot'), puts: [], botSends: [], othersWithBot: [] });

async function round(t: Target, f: Figures): Promise<void> {
  await votePhase(t, f.votes);
  await measured(t, f.putsAlone, SECONDS / 2, async () => {
    const latencies = await atRate(BOT_RATE, SECONDS / 2, storageWriter(t, f.putsAlone.latencies));
    return latencies.length;
  });
  await measured(t, f.othersAlone, SECONDS, async () => {
    f.othersAlone.latencies.push(...(await atRate(OTHERS_RATE, SECONDS, otherSend(t))));
    return f.othersAlone.latencies.length;
  });
  await measured(t, f.botPhase, SECONDS, async () => {
    const write = storageWriter(t, f.puts);
    const [others, bot] = await Promise.all([
      atRate(OTHERS_RATE, SECONDS, otherSend(t)),
      atRate(BOT_RATE, SECONDS, async (i) => {
        const sent = await call(t.port, 'POST', `${API}/messages`, t.botAuth, { type: 'stream', to: 'bench', topic: 'bot', content: `count is ${i}` });
        f.botSends.push(sent.ms);
        return write(i);
      }),
    ]);
    f.othersWithBot.push(...others);
    return others.length + bot.length * 2;
  });
}

const summary = (values: number[]) => ({
  count: values.length,
  p50_ms: Number(percentile(values, 50).toFixed(1)),
  p90_ms: Number(percentile(values, 90).toFixed(1)),
  p99_ms: Number(percentile(values, 99).toFixed(1)),
  max_ms: Number(percentile(values, 100).toFixed(1)),
});
const costs = (p: Phase) => ({
  load_average_1m_at_start: p.loads.join(' '),
  floor_health_live: summary(p.floor),
  server_cpu_ms_per_request: Number((p.cpuMs / p.requests).toFixed(2)),
  database_cpu_ms_per_request: Number((p.dbCpuMs / p.requests).toFixed(2)),
});
const report = (f: Figures) => ({
  poll_votes: { voters: VOTERS, options: 5, at_once: VOTES_AT_ONCE, polls: ROUNDS, ...summary(f.votes.latencies), target_p99_ms: 20, ...costs(f.votes) },
  bot_storage_put_alone: { rate_per_s: BOT_RATE, ...summary(f.putsAlone.latencies), ...costs(f.putsAlone) },
  bot_storage_put_with_sends: { rate_per_s: BOT_RATE, ...summary(f.puts), target_p99_ms: 20, ...costs(f.botPhase), cpu_note: 'per request of the phase: the bot\'s sends and PUTs and the others\' sends' },
  bot_sends: summary(f.botSends),
  other_sends_alone: { rate_per_s: OTHERS_RATE, ...summary(f.othersAlone.latencies), ...costs(f.othersAlone) },
  other_sends_with_bot: { rate_per_s: OTHERS_RATE, ...summary(f.othersWithBot) },
});

const baselineDir = process.env.BENCH_BASELINE_DIR;
const cleanups: Array<() => Promise<void>> = [];
try {
  const server = await startTarget('server', undefined, nodeArgs);
  cleanups.push(server.cleanup);
  const targets = [server.target];
  if (baselineDir) {
    const baseline = await startTarget('baseline', baselineDir, []);
    cleanups.push(baseline.cleanup);
    targets.push(baseline.target);
  }
  const figures = new Map(targets.map((t) => [t.name, figuresFor()]));
  // Unmeasured: a first poll, PUTs and sends warm each server's code and caches alike.
  for (const t of targets) {
    const warm = figuresFor();
    await votePhase(t, warm.votes);
    await atRate(BOT_RATE, 0.5, storageWriter(t, []));
    await atRate(OTHERS_RATE, 1, otherSend(t));
  }
  const loadBefore = loadAverage();
  for (let r = 0; r < ROUNDS; r++) {
    // Turns alternate which target goes first, so neither always follows the other's backlog.
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
      const f = figures.get(t.name)!;
      await round(t, f);
      console.log(`round ${r + 1} ${t.name}: votes ${JSON.stringify(summary(f.votes.latencies))} puts alone ${JSON.stringify(summary(f.putsAlone.latencies))} puts ${JSON.stringify(summary(f.puts))} load ${loadAverage()[0]}`);
    }
  }
  const result = {
    benchmark: 'widgets',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_before: loadBefore.join(' / '), load_average_after: loadAverage().join(' / ') },
    setup: {
      server: `one compiled process (node dist/src/server.js, WEB_CONCURRENCY=1), LOG_LEVEL=${process.env.BENCH_LOG_LEVEL ?? 'info'}, PostgreSQL + NATS, HTTP on 127.0.0.1 with keep-alive`,
      measured: `${ROUNDS} rounds; each: a poll of ${VOTERS} votes, PUTs alone ${SECONDS / 2} s, others alone ${SECONDS} s, others beside the bot ${SECONDS} s${baselineDir ? '; server and baseline take turns' : ''}`,
      floor: `GET /health/live at ${FLOOR_RATE}/s during each phase (1 s during a poll)`,
    },
    ...report(figures.get('server')!),
    ...(baselineDir ? { baseline: { revision: baselineDir, ...report(figures.get('baseline')!) } } : {}),
    failed_requests: errors,
    first_failure: firstError || null,
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult(process.env.BENCH_RESULT_NAME ?? 'widgets', result)}`);
} finally {
  if (serverErrors.length > 0) console.log(`server errors:\n${serverErrors.join('\n')}`);
  closeConnections();
  for (const cleanup of cleanups.reverse()) await cleanup();
}
