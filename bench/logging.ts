/**
 * What request logging costs (issue 21, item 3: at most 5% of throughput at info level). The compiled
 * server on PostgreSQL + NATS is started twice on one database, once with LOG_LEVEL=info (one JSON
 * line per request, written to a file as a log collector's pipe would take it) and once with
 * LOG_LEVEL=silent, in alternating rounds so that a change of machine load hits both alike; each
 * round drives GET /api/v1/users/me (authenticated, one cached read: a cheap request, where a log
 * line weighs most) with BENCH_CONCURRENCY clients for BENCH_SECONDS from outside the process.
 *
 *   BENCH_ROUNDS (default 3), BENCH_SECONDS (default 5), BENCH_CONCURRENCY (default 16)
 *   BENCH_DATABASE_URL / BENCH_NATS_URL
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import pino from 'pino';
import { benchRoot, freshDatabase, throughput, writeResult } from './util.js';

const repo = path.resolve(benchRoot, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PORT = 29_700;

async function waitReady(child: ChildProcess): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 180_000; await new Promise((r) => setTimeout(r, 50))) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${PORT}/health/ready`)).ok) return;
    } catch {
      // not yet
    }
  }
  throw new Error('server not ready');
}

execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'inherit' });
const database = await freshDatabase('bench_logging');
const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-logging-'));
const env = {
  ...process.env,
  DATABASE_URL: database.url,
  NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
  NATS_STREAM: `BENCH_LOGGING_${Date.now()}`,
  DATA_DIR: dataDir,
  DATA_KEY_SECRET: '11'.repeat(32),
  PORT: String(PORT),
  RATE_LIMIT_PER_MINUTE: '0',
  WEB_CONCURRENCY: '1',
};

/** CPU time (user + system) the process has used, in ms: less disturbed by other load than a rate. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function round(level: 'info' | 'silent'): Promise<{ perSecond: number; cpuPerRequestUs: number; logBytes: number }> {
  const logFile = path.join(dataDir, `server-${level}.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['dist/src/server.js'], { cwd: repo, env: { ...env, LOG_LEVEL: level }, stdio: ['ignore', out, out] });
  try {
    await waitReady(child);
    const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
    const authorization = `Basic ${Buffer.from(`owner@example.com:${key}`).toString('base64')}`;
    const pool = new Pool(`http://127.0.0.1:${PORT}`, { connections: CONCURRENCY });
    const call = async () => {
      const { statusCode, body } = await pool.request({ method: 'GET', path: '/api/v1/users/me', headers: { authorization } });
      await body.text();
      if (statusCode !== 200) throw new Error(`status ${statusCode}`);
    };
    await throughput(CONCURRENCY, 1_000, call); // warm-up: validators, caches, JIT
    const before = statSync(logFile).size;
    const cpuBefore = cpuMs(child.pid!);
    const { perSecond, ops } = await throughput(CONCURRENCY, SECONDS * 1_000, call);
    const cpuPerRequestUs = Math.round((1000 * (cpuMs(child.pid!) - cpuBefore)) / ops);
    await pool.close();
    return { perSecond, cpuPerRequestUs, logBytes: statSync(logFile).size - before };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const rounds: Array<{ info: number; silent: number; info_cpu_us: number; silent_cpu_us: number; log_bytes: number; load: number }> = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    const info = await round('info');
    const silent = await round('silent');
    rounds.push({ info: info.perSecond, silent: silent.perSecond, info_cpu_us: info.cpuPerRequestUs, silent_cpu_us: silent.cpuPerRequestUs, log_bytes: info.logBytes, load: Number(loadavg()[0]!.toFixed(2)) });
    console.log(`round ${i + 1}: info ${info.perSecond} req/s, ${info.cpuPerRequestUs} µs CPU/request (${info.logBytes} bytes of log); silent ${silent.perSecond} req/s, ${silent.cpuPerRequestUs} µs CPU/request; load ${loadavg()[0]!.toFixed(2)}`);
  }
} finally {
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
/**
 * The CPU one request line costs, measured alone: the same pino call the server makes, to a file.
 * Set against the server's CPU per request (silent) it gives the share the line takes, a figure
 * that the machine's load disturbs far less than the throughput of two runs.
 */
function lineCpuUs(): number {
  const file = path.join(tmpdir(), `bench-logging-line-${process.pid}.log`);
  const log = pino({ level: 'info' }, pino.destination({ dest: file, sync: true })).child({ reqId: 'c0ffee-0123456789' });
  const line = () => log.info({ method: 'GET', path: '/api/v1/users/me', status: 200, ms: 1.2 }, 'request');
  for (let i = 0; i < 5_000; i++) line();
  const n = 100_000;
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) line();
  const used = process.cpuUsage(before);
  rmSync(file, { force: true });
  return Number(((used.user + used.system) / n).toFixed(2));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const info = median(rounds.map((r) => r.info));
const silent = median(rounds.map((r) => r.silent));
const cost = Number((100 * (1 - info / silent)).toFixed(1));
const infoCpu = median(rounds.map((r) => r.info_cpu_us));
const silentCpu = median(rounds.map((r) => r.silent_cpu_us));
// A CPU-bound server's throughput is the inverse of its CPU per request.
const cpuCost = Number((100 * (1 - silentCpu / infoCpu)).toFixed(1));
const lineUs = lineCpuUs();
const lineShare = Number(((100 * lineUs) / silentCpu).toFixed(1));
console.log(`one request line: ${lineUs} µs CPU, ${lineShare}% of a silent request's ${silentCpu} µs`);
console.log(`logging at info: ${cost}% less throughput (median info ${info} req/s, silent ${silent} req/s); ${cpuCost}% of the server's CPU per request (${infoCpu} vs ${silentCpu} µs); target <= 5%`);
const file = writeResult('logging', {
  measured_at: new Date().toISOString(),
  machine: { load_average_at_end: loadavg().map((l) => Number(l.toFixed(2))) },
  method: `GET /api/v1/users/me, ${CONCURRENCY} keep-alive clients for ${SECONDS} s per round, info and silent alternating, ${ROUNDS} rounds, medians`,
  target_cost_percent: 5,
  info_per_second: info,
  silent_per_second: silent,
  cost_percent: cost,
  info_cpu_us_per_request: infoCpu,
  silent_cpu_us_per_request: silentCpu,
  cpu_cost_percent: cpuCost,
  line_cpu_us: lineUs,
  line_share_of_request_cpu_percent: lineShare,
  rounds,
});
console.log(`written to ${file}`);
