import t from 'tap';
import { sql } from 'kysely';
import { connect, AckPolicy, DeliverPolicy } from 'nats';
import { startTestPlatform, testMetadata } from '../helpers/platform.js';
import { defineProjection } from '../../projections/define.js';
import type { Projection } from '../../src/projections-api.js';
import { NatsBus } from '../../src/bus/nats-bus.js';

const WRITERS = 10;
const DURATION_MS = Number(process.env.STRESS_MS ?? 4_000);

// A projection that records every position it folds; the primary key turns a double delivery into an error.
const seenProjection: Projection = {
  ...defineProjection({ name: 'test_seen', version: 1, tables: [], handlers: {} }),
  handles: new Set(['Tick']),
  apply: async (trx, event) => {
    await sql`INSERT INTO test_seen (position, writer) VALUES (${event.position}, ${String(event.data.writer)})`.execute(trx);
  },
};

t.test(`${WRITERS} concurrent writers: reader, projection and NATS see every event exactly once, in order`, async (t) => {
  const p = await startTestPlatform(t, [seenProjection]);
  await sql`CREATE TABLE IF NOT EXISTS test_seen (position bigint PRIMARY KEY, writer text NOT NULL)`.execute(p.db);

  let stop = false;
  let writersDone = false;
  const acknowledged: number[] = [];
  const writer = async (w: number) => {
    let n = 0;
    while (!stop) {
      // Each writer owns a stream and states the version it expects.
      n += 1;
      const events = await p.store.append(
        [{ streamId: `writer-${w}`, expectedVersion: n === 1 ? -1 : n - 1, events: [{ type: 'Tick', data: { writer: w, n } }] }],
        testMetadata(),
      );
      acknowledged.push(events[0]!.position);
    }
  };

  // The reader follows the log by position while writers are committing.
  const seenByReader: number[] = [];
  const reader = (async () => {
    let cursor = 0;
    for (;;) {
      const batch = await p.store.readAll(cursor, 500);
      for (const event of batch) {
        seenByReader.push(event.position);
        cursor = event.position;
      }
      if (batch.length === 0) {
        if (writersDone && cursor >= acknowledged.reduce((a, b) => Math.max(a, b), 0)) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  })();

  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  await new Promise((r) => setTimeout(r, DURATION_MS));
  stop = true;
  await Promise.all(writers);
  writersDone = true;
  await reader;

  const total = acknowledged.length;
  t.ok(total > WRITERS * 5, `wrote ${total} events`);
  t.same(seenByReader, Array.from({ length: total }, (_, i) => i + 1), 'the reader saw 1..N, each once, in order');

  t.equal(await p.projections.waitFor(total, 20_000), true, 'projections caught up');
  const projected = await sql<{ n: number; min: number; max: number }>`SELECT count(*)::int8 AS n, min(position)::int8 AS min, max(position)::int8 AS max FROM test_seen`.execute(p.db);
  t.same(projected.rows[0], { n: total, min: 1, max: total }, 'the projection folded each event once');

  if (p.bus instanceof NatsBus) {
    const bus = p.bus;
    const relay = p.relay!;
    for (let i = 0; i < 200 && relay.relayedPosition < total; i++) await new Promise((r) => setTimeout(r, 50));
    const nc = await connect({ servers: process.env.TEST_NATS_URL });
    t.teardown(() => nc.close());
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(bus.stream, { durable_name: 'checker', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
    const consumer = await js.consumers.get(bus.stream, 'checker');
    const ids = new Set<string>();
    const positions: number[] = [];
    const messages = await consumer.fetch({ max_messages: total + 10, expires: 3_000 });
    for await (const msg of messages) {
      const event = msg.json<{ event_id: string; position: number }>();
      ids.add(event.event_id);
      positions.push(event.position);
      if (positions.length === total) break;
    }
    t.equal(positions.length, total, 'NATS received every event');
    t.equal(ids.size, total, 'each event_id once');
    t.same(positions, Array.from({ length: total }, (_, i) => i + 1), 'in log order');
  }
});
