import t from 'tap';
import { RecentCommits } from '../../src/eventstore/recent-commits.js';
import type { StoredEvent } from '../../src/eventstore/types.js';
import { EventStore } from '../../src/eventstore/event-store.js';
import { InProcessBus } from '../../src/bus/in-process-bus.js';
import { ProjectionRunner } from '../../src/projection-runner.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';

const event = (position: number): StoredEvent => ({
  position, event_id: `e${position}`, stream_id: 's', stream_version: position, type: 'T', schema_version: 1,
  data: {}, metadata: { actor_id: null, realm_id: 1, client: 't', request_id: 'r', time: '' }, hash: '',
});
const positions = (events: StoredEvent[] | undefined) => events?.map((e) => e.position);

t.test('the recent list answers only for stretches of the log it holds whole', async (t) => {
  const recent = new RecentCommits(5);
  t.equal(recent.after(0, 10), undefined, 'empty: cannot say');
  recent.add([event(3), event(4)]);
  t.same(positions(recent.after(2, 10)), [3, 4], 'from its first event');
  t.same(positions(recent.after(3, 10)), [4]);
  t.equal(recent.after(1, 10), undefined, 'position 2 was never seen');
  t.equal(recent.after(4, 10), undefined, 'beyond its last event is unknown');
  t.same(positions(recent.range(2, 4)), [3, 4]);
  t.equal(recent.range(2, 5), undefined, 'a range reaching past the list');
  t.same(recent.range(4, 4), [], 'an empty range');

  recent.add([event(5), event(6), event(7), event(8)]);
  t.same(positions(recent.after(3, 10)), [4, 5, 6, 7, 8], 'capacity keeps the newest five');
  t.equal(recent.after(2, 10), undefined, 'the oldest fell off');
  t.same(positions(recent.after(5, 2)), [6, 7], 'limit');

  recent.add([event(10)]);
  t.equal(recent.after(8, 10), undefined, 'a gap (another process appended 9) empties the list');
  t.same(positions(recent.after(9, 10)), [10]);
  for (let p = 11; p < 40; p++) recent.add([event(p)]);
  t.same(positions(recent.after(34, 10)), [35, 36, 37, 38, 39], 'compaction keeps the live part');
});

t.test('checkpoints moved by another worker are noticed: the batch is folded again from where they stand', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  await sendStream(s, alice, general, 'one', 'first');

  const runner = s.platform.projections;
  const guesses: Array<number | undefined> = [];
  const refusals: string[] = [];
  const apply = runner.applyBatchInTransaction.bind(runner);
  runner.applyBatchInTransaction = async (trx, limit, guess) => {
    guesses.push(guess);
    try {
      return await apply(trx, limit, guess);
    } catch (error) {
      refusals.push((error as Error).constructor.name);
      throw error;
    }
  };

  // Another worker (its own store and bus, so this process hears nothing) appends and projects.
  const { db } = s.platform;
  const otherStore = new EventStore(db);
  const other = new ProjectionRunner(db, otherStore, allProjections, new InProcessBus());
  await otherStore.append([{ streamId: 'test-note', expectedVersion: undefined, events: [{ type: 'TestNote', data: {} }] }], { actor_id: null, realm_id: 1, client: 'test', request_id: 'note', time: new Date().toISOString() });
  await other.catchUp();
  other.stop();

  const id = await sendStream(s, alice, general, 'two', 'second');
  t.ok(refusals.includes('StaleCheckpoints'), 'the pass on the old guess was refused');
  t.ok(guesses.includes(undefined), 'and the next pass read the checkpoints');
  const got = await s.api('GET', `/messages/${id}`, alice);
  t.equal(got.body.message.content, '<p>second</p>', 'the message sent after the takeover is projected');

  const tables = allProjections.flatMap((p) => p.tables);
  const live = await tableChecksums(db, tables);
  await new ProjectionRunner(db, s.platform.store, allProjections, new InProcessBus()).rebuild();
  t.same(await tableChecksums(db, tables), live, 'nothing was folded twice: a rebuild gives the same tables');
  const head = (await s.platform.store.head()).position;
  const checkpoints = await db.selectFrom('checkpoints').select('position').execute();
  t.ok(checkpoints.every((c) => Number(c.position) === head), 'every checkpoint at the head');
});

t.test('an event of this process folded first by another worker is not folded again on the old guess', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  await sendStream(s, alice, general, 'one', 'first');
  const { db } = s.platform;
  const runner = s.platform.projections;

  // This process commits a message but its worker does not run (as when another process wins the
  // projection lock and its wake-up is lost with NATS down); the other worker folds it.
  const { kick, waitFor } = runner;
  runner.kick = () => undefined;
  runner.waitFor = async () => true;
  const id = await sendStream(s, alice, general, 'two', 'second');
  runner.kick = kick;
  runner.waitFor = waitFor;
  // Another process's store: the same database and the same key-encryption key (sealed content opens).
  const otherStore = new EventStore(db);
  otherStore.crypto = s.platform.store.crypto;
  const other = new ProjectionRunner(db, otherStore, allProjections, new InProcessBus());
  await other.catchUp();
  other.stop();
  t.ok(await db.selectFrom('messages').select('id').where('id', '=', id).executeTakeFirst(), 'the other worker folded the message');

  await t.resolves(runner.catchUp(), 'this worker catches up without folding the message twice');
  t.equal(runner.lastError, undefined, 'no failed pass');
  const later = await sendStream(s, alice, general, 'three', 'third');
  t.equal((await s.api('GET', `/messages/${later}`, alice)).body.message.content, '<p>third</p>', 'and keeps projecting');
  const tables = allProjections.flatMap((p) => p.tables);
  const live = await tableChecksums(db, tables);
  await new ProjectionRunner(db, s.platform.store, allProjections, new InProcessBus()).rebuild();
  t.same(await tableChecksums(db, tables), live, 'a rebuild gives the same tables');
});
