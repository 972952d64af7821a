/**
 * Start-up and memory at rest, as an operator sees them: time from spawning the server to its first
 * successful GET /health/ready, and the resident memory (RSS) of the whole process tree 5 s later,
 * for the compiled server (`node dist/src/server.js`, what `npm start` and the image run), for the
 * same through `npm start` (npm and sh stay as parents), and for the TypeScript loader way it ran
 * before. Floor: a bare fastify process answering one route, measured the same way in the same run.
 *
 *   BENCH_ROUNDS (default 3)   starts per variant; the median is reported
 *   BENCH_DATABASE_URL / BENCH_NATS_URL   also measure the compiled server on PostgreSQL + NATS
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchRoot, freshDatabase, writeResult } from './util.js';

const repo = path.resolve(benchRoot, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REST_MS = 5_000;

const FLOOR_SERVER = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/health/ready', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

interface Variant {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /**
   * true: a fresh DATA_DIR per start (the embedded database; the first start creates the organization);
   * a path: every start on that existing directory (a restart, as an operator's server runs every day after the first).
   */
  dataDir?: boolean | string;
}

/** The processes in the tree rooted at pid, and their resident memory together in KiB. */
function processTree(root: number): { rssKiB: number; processes: number } {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) if (tree.has(ppid) && !tree.has(pid)) (tree.add(pid), (grew = true));
  }
  let total = 0;
  for (const pid of tree) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += Number(match?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return { rssKiB: total, processes: tree.size };
}

async function waitReady(port: number, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health/ready`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('not ready in time');
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // the group has already gone
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  signalGroup(child, 'SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) signalGroup(child, 'SIGKILL');
}

async function measureOnce(variant: Variant, port: number): Promise<{ readyMs: number; rssMiB: number; processes: number }> {
  const fresh = variant.dataDir === true;
  const dataDir = fresh ? mkdtempSync(path.join(tmpdir(), 'bench-startup-')) : typeof variant.dataDir === 'string' ? variant.dataDir : undefined;
  const started = performance.now();
  const child = spawn(variant.command, variant.args, {
    cwd: repo,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, ...variant.env, PORT: String(port), LOG_LEVEL: 'warn', ...(dataDir ? { DATA_DIR: dataDir } : {}) },
  });
  try {
    await waitReady(port, child);
    const readyMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, REST_MS));
    const { rssKiB, processes } = processTree(child.pid!);
    return { readyMs: Math.round(readyMs), rssMiB: Math.round(rssKiB / 1024), processes };
  } finally {
    await stop(child);
    if (fresh && dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(variant: Variant, port: number) {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await measureOnce(variant, port));
  const result = { ready_ms: median(rounds.map((r) => r.readyMs)), rss_mib: median(rounds.map((r) => r.rssMiB)), processes: rounds[0]!.processes, rounds };
  console.log(`${variant.name}: ready in ${result.ready_ms} ms, ${result.rss_mib} MiB RSS at rest (${result.processes} process(es))`);
  return result;
}

const buildStarted = performance.now();
execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'inherit' });
const buildMs = Math.round(performance.now() - buildStarted);
console.log(`build: ${buildMs} ms`);

const variants: Variant[] = [
  { name: 'floor: bare fastify process', command: process.execPath, args: ['--input-type=module', '-e', FLOOR_SERVER] },
  { name: 'compiled: node dist/src/server.js (embedded, first start)', command: process.execPath, args: ['dist/src/server.js'], dataDir: true },
  { name: 'npm start (builds, then node; npm and sh stay as parents)', command: 'npm', args: ['start'], dataDir: true },
  { name: 'before: TypeScript loader (node --import tsx src/server.ts)', command: process.execPath, args: ['--import', 'tsx', 'src/server.ts'], dataDir: true },
];

const results: Record<string, unknown> = {};
let port = 29_000;
for (const variant of variants) results[variant.name] = await measure(variant, port++);

// Restarts: a first start creates the directory's database and organization; the measured ones reopen it.
const keptDataDir = mkdtempSync(path.join(tmpdir(), 'bench-startup-kept-'));
try {
  const restart: Variant = { name: 'compiled: node dist/src/server.js (embedded, restart on an existing data directory)', command: process.execPath, args: ['dist/src/server.js'], dataDir: keptDataDir };
  await measureOnce({ ...restart, name: 'warm-up' }, port);
  results[restart.name] = await measure(restart, port++);
} finally {
  rmSync(keptDataDir, { recursive: true, force: true });
}

if (process.env.BENCH_DATABASE_URL) {
  const database = await freshDatabase('bench_startup');
  try {
    // One process: the figure. The default on PostgreSQL is a process per core (node:cluster).
    const env = { DATABASE_URL: database.url, NATS_URL: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222', NATS_STREAM: `BENCH_STARTUP_${Date.now()}`, WEB_CONCURRENCY: '1' };
    // The first start migrates and creates the organization; the ones measured start on that log.
    await measureOnce({ name: 'warm-up', command: process.execPath, args: ['dist/src/server.js'], env }, port);
    results['compiled on PostgreSQL + NATS (existing log, WEB_CONCURRENCY=1)'] = await measure({ name: 'compiled on PostgreSQL + NATS (existing log, WEB_CONCURRENCY=1)', command: process.execPath, args: ['dist/src/server.js'], env }, port++);
  } finally {
    await database.drop();
  }
}

const file = writeResult('startup', {
  measured_at: new Date().toISOString(),
  machine: { cores: (await import('node:os')).cpus().length, load_average_at_end: (await import('node:os')).loadavg().map((l) => Number(l.toFixed(2))) },
  method: `median of ${ROUNDS} starts per variant; ready = first 200 from GET /health/ready after spawn; RSS = sum over the process tree ${REST_MS / 1000} s after ready, no forced GC`,
  build_ms: buildMs,
  targets: { processes: 1, rss_mib: 200, ready_ms: 1500 },
  results,
});
console.log(`written to ${file}`);
