import t from 'tap';
import { sql } from 'kysely';
import { startTestPlatform, testMetadata } from '../helpers/platform.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { StreamVersionConflict } from '../../src/eventstore/types.js';

t.test('appends get consecutive positions, stream versions and a hash chain', async (t) => {
  const p = await startTestPlatform(t, []);
  const first = await p.store.append([{ streamId: 's-1', expectedVersion: -1, events: [{ type: 'A', data: { n: 1 } }, { type: 'B', data: { n: 2 } }] }], testMetadata());
  const second = await p.store.append([{ streamId: 's-1', expectedVersion: 2, events: [{ type: 'C', data: { n: 3 } }] }], testMetadata());
  t.same(first.map((e) => e.position), [1, 2]);
  t.same(first.map((e) => e.stream_version), [1, 2]);
  t.equal(second[0]!.position, 3);
  t.equal(second[0]!.stream_version, 3);
  const report = await verifyChain(p.db);
  t.equal(report.ok, true);
  t.equal(report.checked, 3);
  t.equal(report.headHash, second[0]!.hash);
  const stream = await p.store.readStream('s-1');
  t.same(stream.map((e) => e.type), ['A', 'B', 'C']);
});

t.test('the database refuses UPDATE, DELETE and TRUNCATE on events', async (t) => {
  const p = await startTestPlatform(t, []);
  await p.store.append([{ streamId: 's', expectedVersion: undefined, events: [{ type: 'A', data: {} }] }], testMetadata());
  await t.rejects(sql`UPDATE events SET type = 'X'`.execute(p.db), /append-only/);
  await t.rejects(sql`DELETE FROM events`.execute(p.db), /append-only/);
  await t.rejects(sql`TRUNCATE events`.execute(p.db), /append-only/);
  const rows = await p.db.selectFrom('events').select('type').execute();
  t.same(rows, [{ type: 'A' }]);
});

t.test('verify finds a row tampered with by a superuser, and names its position', async (t) => {
  const p = await startTestPlatform(t, []);
  for (let i = 0; i < 5; i++) {
    await p.store.append([{ streamId: `s-${i}`, expectedVersion: -1, events: [{ type: 'A', data: { i } }] }], testMetadata());
  }
  const good = await verifyChain(p.db);
  t.equal(good.ok, true);
  await sql`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`.execute(p.db);
  await sql`UPDATE events SET data = '{"i": 99}'::jsonb WHERE position = 3`.execute(p.db);
  await sql`ALTER TABLE events ENABLE TRIGGER events_no_update_delete`.execute(p.db);
  const bad = await verifyChain(p.db);
  t.equal(bad.ok, false);
  t.equal(bad.firstBrokenPosition, 3);

  // A stale head exported before truncation is missing from a shortened log.
  const stale = good.headHash;
  const truncated = await verifyChain(p.db, { expectedHead: 'f'.repeat(64) });
  t.equal(truncated.ok, false);
  void stale;
});

t.test('verify with an expected head detects a truncated log', async (t) => {
  const p = await startTestPlatform(t, []);
  for (let i = 0; i < 4; i++) await p.store.append([{ streamId: `s-${i}`, expectedVersion: -1, events: [{ type: 'A', data: { i } }] }], testMetadata());
  const head = (await verifyChain(p.db)).headHash;
  t.equal((await verifyChain(p.db, { expectedHead: head })).ok, true, 'the current head is found');
  await sql`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`.execute(p.db);
  await sql`DELETE FROM events WHERE position = 4`.execute(p.db);
  await sql`ALTER TABLE events ENABLE TRIGGER events_no_update_delete`.execute(p.db);
  const report = await verifyChain(p.db, { expectedHead: head });
  t.equal(report.ok, false, 'a truncated log no longer contains the exported head');
  t.match(report.reason, /expected head/);
});

t.test('optimistic concurrency: a stale expected version is refused, never silently applied', async (t) => {
  const p = await startTestPlatform(t, []);
  await p.store.append([{ streamId: 'acct', expectedVersion: -1, events: [{ type: 'Opened', data: {} }] }], testMetadata());
  const racers = await Promise.allSettled([
    p.store.append([{ streamId: 'acct', expectedVersion: 1, events: [{ type: 'Deposited', data: { by: 'a' } }] }], testMetadata()),
    p.store.append([{ streamId: 'acct', expectedVersion: 1, events: [{ type: 'Deposited', data: { by: 'b' } }] }], testMetadata()),
  ]);
  t.equal(racers.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one wins');
  const loser = racers.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.type(loser.reason, StreamVersionConflict);
  const stream = await p.store.readStream('acct');
  t.equal(stream.length, 2);
});

t.test('optimistic concurrency through the command runner: racing commands both succeed by retrying', async (t) => {
  const p = await startTestPlatform(t, []);
  await p.store.append([{ streamId: 'counter', expectedVersion: -1, events: [{ type: 'Set', data: { value: 0 } }] }], testMetadata());
  // Each command reads the current value and appends value+1 at the version it read: a lost update
  // would leave the final value below the number of commands.
  const increment = () =>
    p.commands.run(testMetadata(), async () => {
      const events = await p.store.readStream('counter');
      const value = events.reduce((v, e) => Number(e.data.value ?? v), 0);
      return { appends: [{ streamId: 'counter', expectedVersion: events.length, events: [{ type: 'Set', data: { value: value + 1 } }] }], result: value + 1 };
    });
  const results = await Promise.all(Array.from({ length: 10 }, increment));
  t.same([...results.map((r) => r.result)].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const final = await p.store.readStream('counter');
  t.equal(final[final.length - 1]!.data.value, 10);
});

t.test('one bad request in a batch does not fail its neighbours', async (t) => {
  const p = await startTestPlatform(t, []);
  const results = await Promise.allSettled([
    p.store.append([{ streamId: 'ok-1', expectedVersion: -1, events: [{ type: 'A', data: { text: 'fine' } }] }], testMetadata()),
    p.store.append([{ streamId: 'bad', expectedVersion: -1, events: [{ type: 'A', data: { text: 'nul \u0000 byte' } }] }], testMetadata()),
    p.store.append([{ streamId: 'ok-2', expectedVersion: -1, events: [{ type: 'A', data: { text: 'fine' } }] }], testMetadata()),
  ]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.equal((await verifyChain(p.db)).ok, true);
});

t.test('a commit listener that throws neither fails the append nor appends the batch twice', async (t) => {
  const p = await startTestPlatform(t, []);
  p.store.onCommit(() => {
    throw new Error('listener broke');
  });
  const appended = await Promise.all(
    [0, 1, 2, 3].map((i) => p.store.append([{ streamId: `l-${i}`, expectedVersion: undefined, events: [{ type: 'A', data: { i } }] }], testMetadata())),
  );
  t.same(appended.map((events) => events.length), [1, 1, 1, 1], 'every append answered with its event');
  const rows = await p.db.selectFrom('events').select(['stream_id']).orderBy('position').execute();
  t.same(rows.map((r) => r.stream_id).sort(), ['l-0', 'l-1', 'l-2', 'l-3'], 'each event is in the log once');
  t.match(String(p.store.listenerError), /listener broke/, 'the listener error is kept for inspection');
});

t.test('a lone event (append_event) and a batch (append_events) continue one chain under the same checks', async (t) => {
  const p = await startTestPlatform(t, []);
  // The first append goes alone; the two made in the same tick wait for it and go as one batch.
  const [lone, a, b] = await Promise.all([
    p.store.append([{ streamId: 'one', expectedVersion: -1, events: [{ type: 'A', data: { n: 1 } }] }], testMetadata()),
    p.store.append([{ streamId: 'one', expectedVersion: 1, events: [{ type: 'B', data: { n: 2 } }] }], testMetadata()),
    p.store.append([{ streamId: 'two', expectedVersion: undefined, events: [{ type: 'C', data: { n: 3 } }] }], testMetadata()),
  ]);
  const again = await p.store.append([{ streamId: 'two', expectedVersion: 1, events: [{ type: 'D', data: { n: 4 } }] }], testMetadata());
  t.same([...lone!, ...a!, ...b!, ...again].map((e) => [e.position, e.stream_id, e.stream_version]), [[1, 'one', 1], [2, 'one', 2], [3, 'two', 1], [4, 'two', 2]]);
  const refused = await p.store.append([{ streamId: 'one', expectedVersion: 1, events: [{ type: 'E', data: {} }] }], testMetadata()).catch((e: unknown) => e);
  t.ok(refused instanceof StreamVersionConflict, 'a lone event at a stale version is refused');
  t.equal((refused as StreamVersionConflict).actual, 2);
  const report = await verifyChain(p.db);
  t.equal(report.ok, true);
  t.equal(report.checked, 4);
  t.equal(report.headHash, again[0]!.hash);
});
