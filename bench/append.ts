/**
 * Event store append rate against plain single-row INSERTs over the same pool, at 1, 8 and 32
 * concurrent writers, on real PostgreSQL: a regression guard (issue 21 item 5), with the global order and
 * the hash chain. Targets: at least 1.0x the plain INSERTs at 8 and 32 writers, 0.7x at 1. Store and plain
 * INSERTs take turns, BENCH_ROUNDS rounds of BENCH_SECONDS each per level (medians), so that a change in the
 * machine's load colours both alike. Writes bench/results/append.json.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { EventStore } from '../src/eventstore/event-store.js';
import { freshDatabase, throughput, writeResult, percentile } from './util.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LEVELS = [1, 8, 32];
const TARGETS: Record<number, number> = { 1: 0.7, 8: 1.0, 32: 1.0 };
const median = (xs: number[]) => percentile(xs, 50);

const database = await freshDatabase('bench_append');
const handle = await openDatabase({ databaseUrl: database.url, poolSize: 40 });
try {
  await migrateToLatest(handle.db);
  await sql`CREATE TABLE plain_events (id bigserial PRIMARY KEY, event_id uuid NOT NULL, stream_id text NOT NULL, type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL)`.execute(handle.db);
  const store = new EventStore(handle.db, handle.namedQuery);
  const metadata = { actor_id: 1, realm_id: 1, client: 'bench', request_id: 'bench', time: new Date().toISOString() };
  const data = { content: 'hello world, this is a benchmark event of ordinary size', n: 0 };
  const results: Record<string, unknown>[] = [];
  for (const writers of LEVELS) {
    const rounds: Array<{ store: number; plain: number; storeP50: number; storeP99: number; plainP50: number; plainP99: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const store_ = await throughput(writers, SECONDS * 1000, async (w, i) => {
        await store.append([{ streamId: `bench-${writers}-${r}-${w}`, expectedVersion: i === 0 ? -1 : i, events: [{ type: 'BenchEvent', data: { ...data, n: i } }] }], { ...metadata, request_id: randomUUID() });
      });
      const plain = await throughput(writers, SECONDS * 1000, async (w, i) => {
        await sql`INSERT INTO plain_events (event_id, stream_id, type, data, metadata) VALUES (${randomUUID()}, ${`plain-${w}`}, 'BenchEvent', ${JSON.stringify({ ...data, n: i })}, ${JSON.stringify(metadata)})`.execute(handle.db);
      });
      rounds.push({
        store: store_.perSecond, plain: plain.perSecond,
        storeP50: percentile(store_.latencies, 50), storeP99: percentile(store_.latencies, 99),
        plainP50: percentile(plain.latencies, 50), plainP99: percentile(plain.latencies, 99),
      });
    }
    const ratio = Number(median(rounds.map((x) => x.store / x.plain)).toFixed(2));
    const row = {
      writers,
      event_store_events_per_s: median(rounds.map((x) => x.store)),
      event_store_p50_ms: median(rounds.map((x) => x.storeP50)),
      event_store_p99_ms: median(rounds.map((x) => x.storeP99)),
      plain_insert_per_s: median(rounds.map((x) => x.plain)),
      plain_p50_ms: median(rounds.map((x) => x.plainP50)),
      plain_p99_ms: median(rounds.map((x) => x.plainP99)),
      ratio,
      target_ratio: TARGETS[writers],
      met: ratio >= TARGETS[writers]!,
      ratio_by_round: rounds.map((x) => Number((x.store / x.plain).toFixed(2))),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  }
  const file = writeResult('append', {
    benchmark: 'append',
    date: new Date().toISOString(),
    seconds_per_round: SECONDS,
    rounds_per_level: ROUNDS,
    machine: { cpus: (await import('node:os')).cpus().length, load_average_at_end: (await import('node:os')).loadavg().map((x) => Number(x.toFixed(2))) },
    targets: { ratio_at_1_writer: '>= 0.7', ratio_at_8_writers: '>= 1.0', ratio_at_32_writers: '>= 1.0 (the 2x target is withdrawn)' },
    results,
  });
  console.log(`written to ${file}`);
} finally {
  await handle.close();
  await database.drop();
}
