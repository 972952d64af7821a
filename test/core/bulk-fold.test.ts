import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { ProjectionRunner } from '../../src/projection-runner.js';
import type { Projection } from '../../src/projections-api.js';

const tables = allProjections.flatMap((p) => p.tables);

t.test('folding the log in runs (bulk handlers) gives exactly the read tables of folding it event by event', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const general = await createChannel(s, s.owner, 'general', [alice, bob]);
  const other = await createChannel(s, alice, 'other', [bob, carol]);
  const ids: number[] = [];
  // Concurrent sends: runs of MessageSent in the log, committed in batches.
  for (let round = 0; round < 4; round++) {
    ids.push(...(await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => sendStream(s, [alice, bob, s.owner][i % 3]!, general, `topic ${i % 2}`, `hello ${round}.${i} @**Bob** https://example.com`)),
      ...Array.from({ length: 3 }, (_, i) => sendStream(s, bob, other, 'chat', `in other ${round}.${i} @**all**`)),
      sendDm(s, alice, [bob], `dm ${round}`),
      sendDm(s, carol, [alice, bob], `group dm ${round}`),
      sendDm(s, bob, [bob], `note to self ${round}`),
    ])));
    await s.api('POST', `/messages/${ids[ids.length - 1]}/reactions`, alice, { emoji_name: 'heart' });
    await s.api('POST', '/messages/flags', bob, { messages: ids.slice(-6), op: 'add', flag: 'read' });
    await s.api('POST', '/messages/flags', alice, { messages: ids.slice(-3), op: 'add', flag: 'starred' });
    await s.api('PATCH', `/messages/${ids[ids.length - 12]}`, alice, { content: `edited ${round} @**Carol**` });
    if (round === 1) await unsubscribe(s, bob, 'general', [bob]);
    if (round === 2) await subscribe(s, bob, 'general', [bob]);
  }
  const live = await tableChecksums(s.platform.db, tables);
  t.ok(live.find((x) => x.table === 'messages')!.rows >= 48, 'the workload sent messages');

  const { db, store, bus } = s.platform;
  let runs = 0;
  const counted: Projection[] = allProjections.map((p) => ({
    ...p,
    applyRun: p.applyRun && (async (trx, events) => {
      runs += 1;
      return p.applyRun!(trx, events);
    }),
  }));
  const eventByEvent: Projection[] = allProjections.map((p) => ({ ...p, bulkTypes: new Set<string>(), applyRun: undefined }));

  const head = (await store.head()).position;
  t.equal(await new ProjectionRunner(db, store, eventByEvent, bus).rebuild(), head, 'event by event: the whole log');
  const single = await tableChecksums(db, tables);
  t.same(single, live, 'event by event gives the live tables');

  t.equal(await new ProjectionRunner(db, store, counted, bus).rebuild(), head, 'in runs: the whole log');
  t.ok(runs > 0, `bulk handlers folded ${runs} runs`);
  const bulk = await tableChecksums(db, tables);
  t.same(bulk, single, 'in runs gives the same tables as event by event');
});
