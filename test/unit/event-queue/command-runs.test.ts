import t from 'tap';
import type { Db } from '../../../src/db/database.js';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import type { StoredEvent } from '../../../src/eventstore/types.js';
import { CommandRuns } from '../../../src/event-queue/command-runs.js';
import { HEARTBEAT_BASE } from '../../../src/event-queue/ids.js';
import { prepareEvent, registerRunTranslator } from '../../../src/event-queue/translators.js';
import type { Recipient } from '../../../src/event-queue/types.js';

/** A run: consecutive log positions of one type appended by one command (one request's metadata). */

function event(position: number, type: string, request: string): StoredEvent {
  return {
    position, event_id: `e${position}`, stream_id: `s${position}`, stream_version: 1, type, schema_version: 1, data: { n: position }, hash: '',
    metadata: { actor_id: 1, realm_id: 1, client: 'test', request_id: request, time: '2024-01-01T00:00:00.000Z' },
  };
}

/** The store's readRange over an array, counting reads. */
function fakeStore(log: StoredEvent[]): { store: EventStore; reads: () => number } {
  let reads = 0;
  const store = {
    async readRange(after: number, upTo: number, types: readonly string[], limit = 1_000) {
      reads += 1;
      return log.filter((e) => e.position > after && e.position <= upTo && types.includes(e.type)).slice(0, limit);
    },
  } as unknown as EventStore;
  return { store, reads: () => reads };
}

t.test('a run ends where the type or the command changes', async (t) => {
  const log = [
    event(1, 'A', 'r1'),
    event(2, 'A', 'r2'), event(3, 'A', 'r2'), event(4, 'A', 'r2'),
    event(5, 'B', 'r2'),
    event(6, 'A', 'r2'),
    event(7, 'A', 'r3'),
  ];
  const runs = new CommandRuns(fakeStore(log).store);
  const positions = async (p: number) => (await runs.runOf(log[p - 1]!)).map((e) => e.position);
  t.same(await positions(1), [1], 'another request before');
  t.same(await positions(3), [2, 3, 4], 'from the middle');
  t.same(await positions(2), [2, 3, 4]);
  t.same(await positions(4), [2, 3, 4], 'from its end');
  t.same(await positions(6), [6], 'an event of another type splits the request into runs');
  t.same(await positions(7), [7], 'the head of the log');
});

t.test('long runs are followed page after page, and read once', async (t) => {
  const log = [event(1, 'A', 'before'), ...Array.from({ length: 700 }, (_, i) => event(i + 2, 'A', 'big')), event(702, 'A', 'after')];
  const { store, reads } = fakeStore(log);
  const runs = new CommandRuns(store);
  const run = await runs.runOf(log[300]!);
  t.equal(run.length, 700);
  t.equal(run[0]!.position, 2);
  t.equal(run[699]!.position, 701);
  const used = reads();
  t.equal((await runs.runOf(log[650]!)).length, 700);
  t.equal(reads(), used, 'another position of a known run reads nothing');
  // Positions of a run prepared side by side share one look-up.
  const side = fakeStore(log);
  const together = new CommandRuns(side.store);
  const found = await Promise.all([10, 200, 400, 600].map((p) => together.runOf(log[p]!)));
  t.ok(found.every((r) => r === found[0]), 'the same run for all of them');
  const alone = fakeStore(log);
  await new CommandRuns(alone.store).runOf(log[10]!);
  t.equal(side.reads(), alone.reads(), 'read as often as one look-up');
  let translations = 0;
  const translate = async () => ++translations;
  t.equal(await runs.memo(run, 'x', translate), 1);
  t.equal(await runs.memo(await runs.runOf(log[5]!), 'x', translate), 1, 'one translation per run');
});

t.test("a run's client events go out at its last position, spilling backwards past one position's slots", async (t) => {
  const recipient = { user: { id: 5 }, queue: {} } as unknown as Recipient;
  let perRecipient = 3;
  registerRunTranslator('TestRun', async (run) => ({
    audience: 'realm',
    maxPerRecipient: perRecipient,
    forUser: () => Array.from({ length: perRecipient }, (_, i) => ({ type: 'test', i, of: run.length })),
  }));
  const db = {} as Db;

  const small = [event(1, 'TestRun', 'one'), event(2, 'TestRun', 'one'), event(3, 'TestRun', 'one')];
  let runs = new CommandRuns(fakeStore(small).store);
  const at = async (log: StoredEvent[], p: number) => (await prepareEvent(log[p - 1]!, db, runs))?.forUser(recipient) ?? null;
  t.equal(await at(small, 1), null);
  t.equal(await at(small, 2), null);
  t.same(await at(small, 3), [{ type: 'test', i: 0, of: 3 }, { type: 'test', i: 1, of: 3 }, { type: 'test', i: 2, of: 3 }]);

  perRecipient = HEARTBEAT_BASE * 2 + 10;
  const big = Array.from({ length: 5 }, (_, i) => event(i + 1, 'TestRun', 'big'));
  runs = new CommandRuns(fakeStore(big).store);
  const shares = [];
  for (let p = 1; p <= 5; p++) shares.push((await at(big, p))?.map((e) => e.i as number) ?? null);
  t.same(shares.slice(0, 2), [null, null], 'earlier positions hold nothing');
  t.equal(shares[2]!.length, HEARTBEAT_BASE);
  t.equal(shares[3]!.length, HEARTBEAT_BASE);
  t.equal(shares[4]!.length, 10);
  t.same(shares.slice(2).flat(), Array.from({ length: perRecipient }, (_, i) => i), 'all of them, in order');
});
