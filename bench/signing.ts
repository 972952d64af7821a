/**
 * What signing the log costs appends: EventStore.append at 1 and 8 concurrent writers on real
 * PostgreSQL, without and with a signing key (HeadSigner), alternating rounds so a busy machine
 * affects both alike. Writes bench/results/signing.json.
 *
 *   npx tsx bench/signing.ts      (BENCH_SECONDS per round, default 5; BENCH_ROUNDS, default 3)
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import os from 'node:os';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { EventStore } from '../src/eventstore/event-store.js';
import { HeadSigner, parseSigningKey } from '../src/eventstore/log-signing.js';
import { readLogId } from '../src/eventstore/log-identity.js';
import { verifyChain } from '../src/eventstore/verify.js';
import { freshDatabase, throughput, writeResult } from './util.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LEVELS = [1, 8];

const database = await freshDatabase('bench_signing');
const handle = await openDatabase({ databaseUrl: database.url, poolSize: 20 });
try {
  await migrateToLatest(handle.db);
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = parseSigningKey(pem);
  const signer = new HeadSigner(handle.db, key, await readLogId(handle.db));
  const store = new EventStore(handle.db, handle.namedQuery);
  const metadata = { actor_id: 1, realm_id: 1, client: 'bench', request_id: 'bench', time: new Date().toISOString() };
  const totals: Record<string, { ops: number; seconds: number }> = {};
  let stream = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const writers of LEVELS) {
      for (const signed of [false, true]) {
        store.signer = signed ? signer : undefined;
        const run = stream++;
        const result = await throughput(writers, SECONDS * 1000, async (w, i) => {
          await store.append([{ streamId: `bench-${run}-${w}`, expectedVersion: i === 0 ? -1 : i, events: [{ type: 'BenchEvent', data: { n: i } }] }], { ...metadata, request_id: randomUUID() });
        });
        await signer.flush();
        const name = `${writers}_writers_${signed ? 'signed' : 'unsigned'}`;
        const total = (totals[name] ??= { ops: 0, seconds: 0 });
        total.ops += result.ops;
        total.seconds += SECONDS;
        console.log(`round ${round + 1}: ${name}: ${result.perSecond} appends/s`);
      }
    }
  }
  const { count } = await handle.db.selectFrom('log_signatures').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  const head = await store.head();
  const started = performance.now();
  const report = await verifyChain(handle.db, { publicKeys: [key.publicKey] });
  const verifySeconds = (performance.now() - started) / 1000;
  const perSecond = Object.fromEntries(Object.entries(totals).map(([name, t]) => [name, Math.round(t.ops / t.seconds)]));
  const file = writeResult('signing', {
    benchmark: 'signing',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(1)) },
    appends_per_s: perSecond,
    signed_cost_percent: Object.fromEntries(LEVELS.map((w) => [`${w}_writers`, Number((100 * (1 - perSecond[`${w}_writers_signed`]! / perSecond[`${w}_writers_unsigned`]!)).toFixed(1))])),
    events: head.position,
    signatures: Number(count),
    // Rows appended while no key was set are holes: verify reports the first; its time is the point here.
    verify_with_key_seconds: Number(verifySeconds.toFixed(2)),
    verify_ok: report.ok,
  });
  console.log(perSecond, `signatures ${count} for ${head.position} events; verify --public-key ${verifySeconds.toFixed(2)} s`);
  console.log(`written to ${file}`);
} finally {
  await handle.close();
  await database.drop();
}
