import t from 'tap';
import { sql } from 'kysely';
import { connect } from 'nats';
import { createPlatform, type Platform } from '../../src/platform.js';
import { RELAY_LOCK_KEY } from '../../src/bus/nats-relay.js';
import { testConfig } from '../helpers/config.js';
import { testMetadata } from '../helpers/platform.js';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_NATS_URL);

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Holders of the relay lock on this database, by backend pid (pg_locks shows advisory locks by their two 32-bit halves). */
const relayLockHolders = async (p: Platform) => (await sql<{ pid: number }>`SELECT pid FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = ${RELAY_LOCK_KEY}
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(p.db)).rows;

t.test('one process holds the relay lock between passes, relays every process\'s events, and hands over when it stops', { skip: !onPostgres && 'needs TEST_DATABASE_URL and TEST_NATS_URL' }, async (t) => {
  const config = await testConfig();
  const a = await createPlatform(config, { projections: [] });
  const b = await createPlatform(config, { projections: [] });
  const closed = new Set<Platform>();
  t.teardown(async () => {
    for (const p of [a, b]) if (!closed.has(p)) await p.close();
    const nc = await connect({ servers: process.env.TEST_NATS_URL });
    await (await nc.jetstreamManager()).streams.delete(config.natsStream).catch(() => undefined);
    await nc.close();
  });
  const append = (p: Platform, n: number) => p.store.append([{ streamId: `tick-${n}`, expectedVersion: -1, events: [{ type: 'Tick', data: { n } }] }], testMetadata());

  let n = 0;
  for (let i = 0; i < 5; i++) await append(i % 2 === 0 ? a : b, n++);
  const relayed = (p: Platform) => p.relay!.relayedPosition;
  t.ok(await until(async () => Math.max(relayed(a), relayed(b)) >= n), 'every event relayed');
  t.ok(await until(async () => (await relayLockHolders(a)).length === 1), 'the relay lock stays held between passes, by one connection');
  const leader = relayed(a) >= n ? a : b;
  const other = leader === a ? b : a;
  t.equal(relayed(other), 0, 'the other process never relayed');

  for (let i = 0; i < 4; i++) await append(other, n++);
  t.ok(await until(() => relayed(leader) >= n), 'the other process\'s events go out through the holder of the lock');

  // The database ends the connection holding the lock (a restart, an administrator): nothing crashes,
  // the lock is free, and a process takes it again at its next pass.
  const [holder] = await relayLockHolders(other);
  await sql`SELECT pg_terminate_backend(${holder!.pid})`.execute(other.db);
  t.ok(await until(async () => (await relayLockHolders(other)).every((h) => h.pid !== holder!.pid)), 'the terminated connection\'s lock is gone');
  for (let i = 0; i < 3; i++) await append(i % 2 === 0 ? other : leader, n++);
  t.ok(await until(async () => Math.max(relayed(a), relayed(b)) >= n), 'events are relayed again');
  t.ok(await until(async () => (await relayLockHolders(other)).length === 1), 'by a new holder of the lock');
  const current = relayed(a) >= n ? a : b;
  const remaining = current === a ? b : a;

  await current.close();
  closed.add(current);
  t.equal((await relayLockHolders(remaining)).length, 0, 'stopping gives the lock up');
  for (let i = 0; i < 3; i++) await append(remaining, n++);
  t.ok(await until(() => relayed(remaining) >= n), 'the remaining process takes over');

  const nc = await connect({ servers: process.env.TEST_NATS_URL });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(config.natsStream);
  const positions: number[] = [];
  for (let seq = 1; seq <= info.state.last_seq; seq++) positions.push(Number((await jsm.streams.getMessage(config.natsStream, { seq })).header.get('Chat-Position')));
  const head = (await remaining.store.head()).position;
  t.same(positions, Array.from({ length: head }, (_, i) => i + 1), 'the stream holds the whole log once, in order');
});
