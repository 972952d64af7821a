/**
 * Event store append rate against plain single-row INSERTs over the same pool, at 1, 8 and 32
 * concurrent writers, on real PostgreSQL. Writes bench/results/append.json.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { EventStore } from '../src/eventstore/event-store.js';
import { freshDatabase, throughput, writeResult, percentile } from './util.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = [1, 8, 32];

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
    const store_ = await throughput(writers, SECONDS * 1000, async (w, i) => {
      await store.append([{ streamId: `bench-${writers}-${w}`, expectedVersion: i === 0 ? -1 : i, events: [{ type: 'BenchEvent', data: { ...data, n: i } }] }], { ...metadata, request_id: randomUUID() });
    });
    const plain = await throughput(writers, SECONDS * 1000, async (w, i) => {
      await sql`INSERT INTO plain_events (event_id, stream_id, type, data, metadata) VALUES (${randomUUID()}, ${`plain-${w}`}, 'BenchEvent', ${JSON.stringify({ ...data, n: i })}, ${JSON.stringify(metadata)})`.execute(handle.db);
    });
    const row = {
      writers,
      event_store_events_per_s: store_.perSecond,
      event_store_p50_ms: percentile(store_.latencies, 50),
      event_store_p99_ms: percentile(store_.latencies, 99),
      plain_insert_per_s: plain.perSecond,
      plain_p50_ms: percentile(plain.latencies, 50),
      plain_p99_ms: percentile(plain.latencies, 99),
      ratio: Number((store_.perSecond / plain.perSecond).toFixed(2)),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  }
  const file = writeResult('append', {
    benchmark: 'append',
    date: new Date().toISOString(),
    seconds_per_level: SECONDS,
    machine: { cpus: (await import('node:os')).cpus().length },
    targets: { ratio_at_32_writers: '>= 2', ratio_at_1_writer: '>= 0.7' },
    results,
  });
  console.log(`written to ${file}`);
} finally {
  await handle.close();
  await database.drop();
}
