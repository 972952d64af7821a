/**
 * What folds remember between passes (src/fold-memory.ts, FoldMemory): a channel's first message
 * id is updated by the first send, not by every send; what is remembered is dropped when a pass
 * fails and forgotten when other hands may have moved the read tables. Whatever the memory, the
 * tables are those a rebuild from the log gives.
 */
import t, { type Test } from 'tap';
import { PassMemory } from '../../src/fold-memory.js';
import { EventStore } from '../../src/eventstore/event-store.js';
import { InProcessBus } from '../../src/bus/in-process-bus.js';
import { ProjectionRunner } from '../../src/projection-runner.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { startTestServer, Role, type TestServer } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { statementCounter } from '../helpers/statement-counter.js';

t.test('a pass memory keeps what a committed pass wrote and nothing of a failed one', async (t) => {
  const memory = new PassMemory();
  memory.set('a', 1);
  t.equal(memory.get('a'), 1, 'a pass reads what it wrote');
  memory.keep();
  memory.set('a', 2);
  memory.set('b', 3);
  memory.drop();
  t.equal(memory.get('a'), 1, 'a failed pass changes nothing');
  t.equal(memory.get('b'), undefined);
  memory.delete('a');
  t.equal(memory.get('a'), undefined, 'a deletion is seen at once');
  memory.drop();
  t.equal(memory.get('a'), 1, 'and undone with its pass');
  memory.delete('a');
  memory.keep();
  t.equal(memory.get('a'), undefined, 'or kept with it');
  memory.set('c', 4);
  memory.keep();
  memory.forget();
  t.equal(memory.get('c'), undefined, 'forget clears everything');
});

const firstMessageOf = async (s: TestServer, streamId: number) =>
  (await s.platform.db.selectFrom('streams').select('first_message_id').where('id', '=', streamId).executeTakeFirstOrThrow()).first_message_id;

async function rebuiltEqualsLive(t: Test, s: TestServer): Promise<void> {
  const tables = allProjections.flatMap((p) => p.tables);
  const live = await tableChecksums(s.platform.db, tables);
  await new ProjectionRunner(s.platform.db, s.platform.store, allProjections, new InProcessBus()).rebuild();
  t.same(await tableChecksums(s.platform.db, tables), live, 'a rebuild from the log gives the same tables');
}

t.test('a channel\'s first message id: set by the first send, not updated by every send, set again after a deletion', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  const updates = statementCounter(s, (text) => /update\s+"?streams"?\s+set\s+"?first_message_id/i.test(text));
  t.teardown(() => updates.restore());

  const first = await sendStream(s, alice, general, 'one', 'first');
  t.equal(await firstMessageOf(s, general), first);
  const afterFirst = updates.count();
  t.ok(afterFirst >= 1, 'the first send updates the channel');
  for (let i = 0; i < 3; i++) await sendStream(s, alice, general, 'one', `more ${i}`);
  t.equal(updates.count(), afterFirst, 'later sends do not');
  t.equal(await firstMessageOf(s, general), first);

  // Every message goes: the channel has no first message, and the next send is it.
  t.equal((await s.api('POST', `/streams/${general}/delete_topic`, s.owner, { topic_name: 'one' })).status, 200);
  t.equal(await firstMessageOf(s, general), null);
  const next = await sendStream(s, alice, general, 'two', 'after the deletion');
  t.equal(await firstMessageOf(s, general), next, 'the deletion made the fold update again');
  await rebuiltEqualsLive(t, s);
});

t.test('what was remembered is forgotten when another worker folded meanwhile', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  await sendStream(s, alice, general, 'one', 'first');
  await sendStream(s, alice, general, 'one', 'second');
  const runner = s.platform.projections;

  // The topic's deletion is folded by another worker (this process's does not run, as when another
  // process holds the projection lock): this one's memory says the channel has a first message.
  const { kick, waitFor } = runner;
  runner.kick = () => undefined;
  runner.waitFor = async () => true;
  t.equal((await s.api('POST', `/streams/${general}/delete_topic`, s.owner, { topic_name: 'one' })).status, 200);
  runner.kick = kick;
  runner.waitFor = waitFor;
  const otherStore = new EventStore(s.platform.db);
  otherStore.crypto = s.platform.store.crypto;
  const other = new ProjectionRunner(s.platform.db, otherStore, allProjections, new InProcessBus());
  await other.catchUp();
  other.stop();
  t.equal(await firstMessageOf(s, general), null, 'the other worker folded the deletion');

  const next = await sendStream(s, alice, general, 'two', 'after the deletion');
  t.equal(await firstMessageOf(s, general), next, 'this worker did not trust what it remembered');
  await rebuiltEqualsLive(t, s);
});
