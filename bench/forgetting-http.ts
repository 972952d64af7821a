/**
 * Part 1 of bench/forgetting.ts as a client sees it: POST /messages over HTTP to two server
 * processes on PostgreSQL + NATS, each on its own database and NATS stream: the production build
 * (dist/src/server.js, encryption on, as every server runs) and bench/plaintext-server.ts (the same
 * code bundled the same way, writing plaintext: the floor). Rounds take turns, the order reversed
 * every other round; each round reports msg/s, p99, and the CPU per send of the server process and
 * of its database connections (application_name), which move less with the machine's load.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { build } from 'esbuild';
import pg from 'pg';
import { benchRoot, freshDatabase, percentile, throughput } from './util.js';
import { cpuTicks, freePort, loadAverage, MS_PER_TICK, startProcess, startServerProcess, stopProcess } from './server-process.js';
import { closeConnections, request } from './http-client.js';
import { benchNatsStream, channelMembers, ownerAuthOf } from './channel-members.js';

const API = '/api/v1';
const repository = path.resolve(benchRoot, '..');

export type Mode = 'on' | 'off';
export interface SendRound { perSecond: number; p50: number; p99: number; serverCpuMs: number; databaseCpuMs: number; load: number }

interface Target {
  mode: Mode;
  child: ChildProcess;
  port: number;
  app: string;
  pool: pg.Pool;
  users: Array<{ auth: string }>;
  streamId: number;
}

/** bench/plaintext-server.ts bundled as the build bundles src/server.ts, one level below dist/ like it (src/source-root.ts). */
async function buildPlaintextServer(): Promise<string> {
  const outfile = 'dist/bench/plaintext-server.js';
  await build({ entryPoints: ['bench/plaintext-server.ts'], bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', sourcemap: true, logLevel: 'warning', outfile: path.join(repository, outfile), absWorkingDir: repository });
  return outfile;
}

async function startTarget(mode: Mode, senders: number, cleanups: Array<() => Promise<unknown>>, nodeArgs: string[]): Promise<Target> {
  const database = await freshDatabase(`bench_forgetting_${mode}`);
  cleanups.push(() => database.drop());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-forgetting-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = freePort();
  const app = `bench-forgetting-${mode}`;
  const env = {
    DATABASE_URL: database.url, NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
    NATS_STREAM: benchNatsStream(), DATA_DIR: dataDir,
    DATA_KEY_SECRET: randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, ''),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', RATE_LIMIT_PER_MINUTE: '0', WEB_CONCURRENCY: '1', PORT: String(port), PGAPPNAME: app,
  };
  // The plaintext bundle runs beside the build (dist/ holds the migrations and assets it reads).
  const child = mode === 'on'
    ? await startServerProcess(nodeArgs, env)
    : await startProcess(['--enable-source-maps', ...nodeArgs], await buildPlaintextServer(), env);
  cleanups.push(() => stopProcess(child));
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  cleanups.push(() => pool.end());
  const { users, streamId } = await channelMembers(port, ownerAuthOf(dataDir), senders);
  return { mode, child, port, app, pool, users, streamId };
}

function sendOnce(t: Target, w: number, i: number): Promise<void> {
  const body = new URLSearchParams({ type: 'stream', to: String(t.streamId), topic: `topic ${w % 3}`, content: `message ${i} from ${w}: some words of a usual length, with **markdown**` }).toString();
  return request(t.port, 'POST', `${API}/messages`, t.users[w]!.auth, body).then((reply) => {
    if (reply.status !== 200) throw new Error(`encryption ${t.mode}: POST /messages ${reply.status} ${reply.text}`);
  });
}

/** `rounds` rounds of `seconds` per mode, `senders` concurrent clients; per mode its rounds. */
export async function sendOverHttp(senders: number, seconds: number, rounds: number, nodeArgs: string[] = []): Promise<Record<Mode, SendRound[]>> {
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    // 'on' first: starting it builds dist/, which the plaintext bundle runs beside.
    const on = await startTarget('on', senders, cleanups, nodeArgs);
    const off = await startTarget('off', senders, cleanups, nodeArgs);
    const backendPids = async (t: Target) =>
      (await t.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [t.app])).rows.map((r) => r.pid);
    // Warm-up in turns: in trials the first rounds measured were far slower than the rest (JIT, caches).
    for (let turn = 0; turn < 2; turn++) for (const t of [on, off]) await throughput(senders, 3_000, (w, i) => sendOnce(t, w, i));
    const result: Record<Mode, SendRound[]> = { on: [], off: [] };
    for (let round = 0; round < rounds; round++) {
      for (const t of round % 2 === 0 ? [on, off] : [off, on]) {
        const processBefore = cpuTicks(t.child.pid!);
        const dbBefore = new Map((await backendPids(t)).map((pid) => [pid, cpuTicks(pid)]));
        const startedUs = process.hrtime.bigint() / 1000n;
        const run = await throughput(senders, seconds * 1000, (w, i) => sendOnce(t, w, i));
        const endedUs = process.hrtime.bigint() / 1000n;
        const serverCpuMs = ((cpuTicks(t.child.pid!) - processBefore) * MS_PER_TICK) / run.ops;
        let dbTicks = 0;
        for (const pid of await backendPids(t)) dbTicks += cpuTicks(pid) - (dbBefore.get(pid) ?? 0);
        const figures = {
          perSecond: run.perSecond, p50: percentile(run.latencies, 50), p99: percentile(run.latencies, 99),
          serverCpuMs: Number(serverCpuMs.toFixed(3)), databaseCpuMs: Number(((dbTicks * MS_PER_TICK) / run.ops).toFixed(3)), load: loadAverage()[0]!,
        };
        result[t.mode].push(figures);
        // The monotonic clock a server's --cpu-prof samples carry: a profile can be cut to its rounds.
        if (nodeArgs.length > 0) console.log(`window ${t.mode} ${startedUs} ${endedUs} us`);
        console.log(`http send, round ${round + 1}, encryption ${t.mode}: ${run.perSecond} msg/s, p50 ${figures.p50} p99 ${figures.p99} ms, server ${figures.serverCpuMs} ms CPU/send, database ${figures.databaseCpuMs}, load ${figures.load}`);
      }
    }
    return result;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
    closeConnections();
  }
}
