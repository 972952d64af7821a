import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const benchRoot = path.dirname(fileURLToPath(import.meta.url));

/** A fresh PostgreSQL database for one benchmark run; returns its URL and a drop function. */
export async function freshDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Runs `worker` on `concurrency` loops for `ms` milliseconds; returns operations per second. */
export async function throughput(concurrency: number, ms: number, worker: (w: number, i: number) => Promise<void>): Promise<{ ops: number; perSecond: number; latencies: number[] }> {
  let stop = false;
  let ops = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const loops = Array.from({ length: concurrency }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      const t0 = performance.now();
      await worker(w, i);
      latencies.push(performance.now() - t0);
      ops += 1;
    }
  });
  // A failed request must not go unhandled meanwhile (the process would exit without its cleanup).
  const all = Promise.all(loops);
  all.catch(() => undefined);
  await new Promise((r) => setTimeout(r, ms));
  stop = true;
  await all;
  const seconds = (performance.now() - started) / 1000;
  return { ops, perSecond: Math.round(ops / seconds), latencies };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2));
}

export function writeResult(name: string, result: unknown): string {
  const dir = path.join(benchRoot, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
