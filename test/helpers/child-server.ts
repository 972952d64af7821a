import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { entryPointArgs, repoRoot as root } from './repo-root.js';

export interface ChildServer {
  process: ChildProcess;
  url: string;
  output(): string;
}

let compiledEntry: string | undefined;

/**
 * The server compiled by `npm run build`, into a folder of this process's own inside the repository
 * (so its imports find node_modules, and parallel test files never write over each other's output).
 */
function compiledServer(): string {
  if (!compiledEntry) {
    const outdir = path.join(root, '.dist-test', String(process.pid));
    execFileSync('npm', ['run', '--silent', 'build', '--', `--outdir=${outdir}`], { cwd: root, stdio: 'inherit' });
    process.on('exit', () => rmSync(outdir, { recursive: true, force: true }));
    compiledEntry = path.join(outdir, 'src', 'server.js');
  }
  return compiledEntry;
}

/**
 * Starts the server in its own process and waits until it listens: the sources through tsx, or with
 * `compiled` what `npm start` runs (the build's JavaScript under plain node).
 */
export async function startChildServer(env: Record<string, string>, timeoutMs = 150_000, options: { compiled?: boolean } = {}): Promise<ChildServer> {
  const args = options.compiled ? [compiledServer()] : entryPointArgs('src/server');
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  // How the process ended goes into its output, so a test that finds it dead can say why.
  child.on('exit', (code, signal) => (output += `\n[server process exited: code ${code}, signal ${signal}]\n`));
  const started = Date.now();
  while (!/listening on/.test(output)) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { process: child, url: `http://127.0.0.1:${env.PORT}`, output: () => output };
}

export async function killHard(server: ChildServer): Promise<void> {
  // A process ended by a signal has signalCode set and exitCode null.
  if (server.process.exitCode !== null || server.process.signalCode !== null) return;
  const exited = once(server.process, 'exit');
  server.process.kill('SIGKILL');
  await exited;
}
