/**
 * Servers under test run as their own processes, so a benchmark measures them from outside, as a
 * client sees them, and the clients' own work does not share the server's event loop.
 */
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { benchRoot } from './util.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const repository = path.resolve(benchRoot, '..');

/**
 * Starts `node [nodeArgs] <script>` in `cwd` (the repository by default), through the TypeScript
 * loader when the script is TypeScript, and resolves once it prints "listening on". Only the
 * start-up output is kept, to report a failed start.
 */
export async function startProcess(nodeArgs: string[], script: string, env: Record<string, string>, cwd = repository): Promise<ChildProcess> {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script], {
    cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (d: Buffer) => {
    // Request log lines are drained, not kept.
    if (output.length < 100_000) output += d;
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  for (let i = 0; !/listening on/.test(output); i++) {
    if (child.exitCode !== null || i > 600) throw new Error(`${script} did not start:\n${output}`);
    await sleep(100);
  }
  return child;
}

const built = new Set<string>();

/**
 * Our server as production runs it (`npm start`): the checkout in `cwd` compiled once per run
 * (npm run build), then `node --enable-source-maps dist/src/server.js`. The TypeScript loader
 * would add its own work to the figures (tsx's name-keeping helper alone was ~6% of Markdown's time).
 */
export async function startServerProcess(nodeArgs: string[], env: Record<string, string>, cwd = repository): Promise<ChildProcess> {
  if (!built.has(cwd)) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd, stdio: 'inherit' });
    built.add(cwd);
  }
  return startProcess(['--enable-source-maps', ...nodeArgs], 'dist/src/server.js', env, cwd);
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  // SIGTERM lets the server shut down cleanly (a --cpu-prof profile is written only then).
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

export const MS_PER_TICK = 10; // Linux reports process CPU time in USER_HZ (100) ticks

/** User + system CPU time of a process so far, in ticks; 0 once it has exited. */
export function cpuTicks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * A listening port below Linux's ephemeral range (32768-60999): with many client sockets open, a
 * random port inside it is often already some client's local port.
 */
export const freePort = () => 20_000 + Math.floor(Math.random() * 10_000);

export const loadAverage = () => os.loadavg().map((l) => Number(l.toFixed(2)));
