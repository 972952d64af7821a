/**
 * Memory over a soak: a server process on PostgreSQL + NATS under a steady, moderate mixed load
 * (the clients of bench/mixed.ts: BENCH_SOAK_CLIENTS, default 50, with BENCH_SOAK_THINK_MS, default
 * 3000 ms give or take half, between actions, each also long-polling its queue) for BENCH_SOAK_SECONDS
 * (default 600).
 *
 * Every BENCH_SOAK_SAMPLE_SECONDS (5) the server's resident set is read from /proc/<pid>/status
 * (VmRSS); every 30 s the live memory too (V8 heap in use plus external, after a full collection,
 * through bench/gc-on-signal.mjs, which only benchmark children load).
 *
 * Criterion (the target is "flat after warm-up"): the resident set at the end (mean of the last
 * 30 s of samples) is less than 5% above the warm-up value (mean of the 30 s before the warm-up ends;
 * the warm-up is the first BENCH_SOAK_WARMUP_SECONDS, default 300 or half the run: at this load the
 * event-queue hub's bounded caches of prepared events take about 250 s to fill, and growth until
 * then is those caches, not a leak, as heap snapshots showed). The slope after warm-up (least
 * squares, KiB/min) is reported beside it, for RSS and for live memory.
 * Writes bench/results/soak.json.
 */
import os from 'node:os';
import path from 'node:path';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { percentile, writeResult } from './util.js';
import { Stats, agent, loadAverage, registerAll, runClients, setupWorld, startServer } from './mixed.js';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const CLIENTS = Number(process.env.BENCH_SOAK_CLIENTS ?? 50);
const THINK_MS = Number(process.env.BENCH_SOAK_THINK_MS ?? 3000);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_SOAK_WARMUP_SECONDS ?? Math.min(300, SECONDS / 2));
const LIVE_EVERY_SECONDS = 30;
const GROWTH_LIMIT = 0.05;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** Live memory of the server after a full collection (SIGUSR2, bench/gc-on-signal.mjs), in KiB. */
async function liveKiB(pid: number, file: string): Promise<number | undefined> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; !existsSync(file) && i < 100; i++) await sleep(50);
  try {
    const usage = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; external: number };
    return Math.round((usage.heapUsed + usage.external) / 1024);
  } catch {
    return undefined;
  }
}

/** Least-squares slope of value over time, per minute. */
function slopePerMinute(points: Array<{ t: number; v: number }>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const mv = points.reduce((a, p) => a + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

const memoryFile = path.join(mkdtempSync(path.join(tmpdir(), 'bench-soak-')), 'memory.json');
const loadBefore = loadAverage();
console.log(`soak: ${CLIENTS} clients (think ${THINK_MS} ms) for ${SECONDS} s, warm-up ${WARMUP_SECONDS} s`);
const server = await startServer('bench_soak', { BENCH_MEMORY_FILE: memoryFile });
const pid = server.child.pid!;
const rss: Array<{ t: number; v: number }> = [];
const live: Array<{ t: number; v: number }> = [];
const loads: number[][] = [];
let result: Record<string, unknown>;
try {
  const world = await setupWorld(server, CLIENTS, 5);
  const stats = new Stats();
  await registerAll(server.port, world, stats);
  const run = runClients(server.port, world, stats, { thinkMs: THINK_MS });
  const started = performance.now();
  let nextLive = 0;
  let died = false;
  for (;;) {
    const t = (performance.now() - started) / 1000;
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      died = true;
      break;
    }
    rss.push({ t, v: rssKiB(pid) });
    if (t >= nextLive) {
      const value = await liveKiB(pid, memoryFile);
      if (value !== undefined) live.push({ t, v: value });
      loads.push(loadAverage());
      nextLive += LIVE_EVERY_SECONDS;
      const last = rss[rss.length - 1]!;
      console.log(`soak: ${Math.round(t)} s rss ${Math.round(last.v / 1024)} MiB, live ${value === undefined ? '?' : Math.round(value / 1024)} MiB, ${stats.total().requests} requests, ${stats.total().errors} errors`);
    }
    if (t >= SECONDS) break;
    await sleep(SAMPLE_SECONDS * 1000);
  }
  stats.recording = false;
  const elapsed = (performance.now() - started) / 1000;
  await run.stop();

  const windowMean = (points: Array<{ t: number; v: number }>, from: number, to: number) => mean(points.filter((p) => p.t >= from && p.t <= to).map((p) => p.v));
  const warm = windowMean(rss, WARMUP_SECONDS - 30, WARMUP_SECONDS);
  const end = windowMean(rss, elapsed - 30, elapsed);
  const after = rss.filter((p) => p.t >= WARMUP_SECONDS);
  const liveAfter = live.filter((p) => p.t >= WARMUP_SECONDS);
  const liveWarm = live.filter((p) => p.t <= WARMUP_SECONDS).at(-1)?.v ?? 0;
  const liveEnd = live.at(-1)?.v ?? 0;
  const growth = warm > 0 ? (end - warm) / warm : 0;
  const pass = !died && growth < GROWTH_LIMIT;
  const totals = stats.total();
  result = {
    benchmark: 'soak',
    date: new Date().toISOString(),
    verdict: `${pass ? 'PASS' : 'FAIL'}: resident set ${(growth * 100).toFixed(1)}% above its warm-up value at the end (criterion: under ${GROWTH_LIMIT * 100}% after the first ${WARMUP_SECONDS} s${died ? '; the server process died' : ''})`,
    machine: {
      cpus: os.cpus().length, load_average_before: loadBefore.join(' '),
      load_average_during_min: Math.min(...loads.map((l) => l[0]!)), load_average_during_max: Math.max(...loads.map((l) => l[0]!)),
    },
    setup: {
      clients: CLIENTS, think_ms: THINK_MS, seconds: Number(elapsed.toFixed(0)), warmup_seconds: WARMUP_SECONDS, sample_seconds: SAMPLE_SECONDS,
      server: 'src/server.ts process on PostgreSQL + NATS', load: 'bench/mixed.ts clients: send, GET /messages, reactions, edits, re-registering, long-polls',
    },
    memory: {
      rss_start_mib: Number(((rss[0]?.v ?? 0) / 1024).toFixed(1)),
      rss_warmup_mib: Number((warm / 1024).toFixed(1)),
      rss_end_mib: Number((end / 1024).toFixed(1)),
      rss_max_mib: Number((Math.max(...rss.map((p) => p.v)) / 1024).toFixed(1)),
      rss_growth_after_warmup_percent: Number((growth * 100).toFixed(2)),
      rss_slope_after_warmup_kib_per_min: Number(slopePerMinute(after).toFixed(1)),
      live_warmup_mib: Number((liveWarm / 1024).toFixed(1)),
      live_end_mib: Number((liveEnd / 1024).toFixed(1)),
      live_slope_after_warmup_kib_per_min: Number(slopePerMinute(liveAfter).toFixed(1)),
    },
    load: {
      requests: totals.requests, errors: totals.errors, requests_per_s: Number((totals.requests / elapsed).toFixed(1)),
      message_delivery_p50_ms: percentile(stats.deliveries, 50), message_delivery_p99_ms: percentile(stats.deliveries, 99),
    },
    operations: stats.rows(elapsed),
    samples: live.map((p) => ({
      second: Math.round(p.t),
      rss_mib: Number(((rss.filter((r) => r.t <= p.t).at(-1)?.v ?? 0) / 1024).toFixed(1)),
      live_mib: Number((p.v / 1024).toFixed(1)),
    })),
  };
} finally {
  await server.stop();
  rmSync(path.dirname(memoryFile), { recursive: true, force: true });
}
console.log(result.verdict);
console.log(`written to ${writeResult('soak', result)}`);
agent.destroy();
