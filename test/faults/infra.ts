/**
 * Private infrastructure for fault tests: a PostgreSQL cluster and a NATS server of the test's own,
 * on random loopback ports, so stopping them never disturbs the shared ones on 5432 and 4222.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { freePort } from '../helpers/ports.js';

export { freePort };

function pgBin(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort();
  return `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`;
}


function asPostgres(command: string): string {
  return execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

export interface PrivatePostgres {
  url: string;
  port: number;
  start(): void;
  /** `immediate` is a crash (no checkpoint); `fast` a clean shutdown that drops every connection. */
  stop(mode?: 'fast' | 'immediate'): void;
}

export async function privatePostgres(t: Test): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fault-pg-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  const port = await freePort();
  const bin = pgBin();
  asPostgres(`${bin}/initdb -D ${dir}/data -A trust -U postgres --no-sync >/dev/null`);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => void asPostgres(`${bin}/pg_ctl -D ${dir}/data -o "${options}" -l ${dir}/log -w -t 30 start >/dev/null`),
    stop: (mode = 'fast') => void asPostgres(`${bin}/pg_ctl -D ${dir}/data -m ${mode} -w -t 30 stop >/dev/null`),
  };
  pg.start();
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    try {
      pg.stop('immediate');
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(cleanup);
  // A test that times out may never reach its teardown: the cluster must not outlive the process.
  process.once('exit', cleanup);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(1));
  return pg;
}

export interface PrivateNats {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() - started > timeoutMs) throw new Error(`port ${port} did not open`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function privateNats(t: Test): Promise<PrivateNats> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fault-nats-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const nats: PrivateNats = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
      await waitForPort(port);
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
  await nats.start();
  process.once('exit', () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  t.teardown(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return nats;
}

/** A small HTTP client for a child server, with a hard per-request time bound. */
export function client(baseUrl: string, email: string, key: string, boundMs = 20_000) {
  const auth = basicAuth(email, key);
  return async (method: string, url: string, params: Record<string, unknown> = {}): Promise<{ status: number; body: any; ms: number }> => {
    const started = Date.now();
    const query = method === 'GET' ? `?${encodeParams(params)}` : '';
    const response = await fetch(`${baseUrl}/api/v1${url}${query}`, {
      method,
      headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      body: method === 'GET' ? undefined : encodeParams(params),
      signal: AbortSignal.timeout(boundMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // left as text; the caller asserts JSON
    }
    return { status: response.status, body, ms: Date.now() - started };
  };
}
