import t from 'tap';
import { sql } from 'kysely';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { ProjectionRunner, sendsFirst } from '../../src/projection-runner.js';
import type { StoredEvent } from '../../src/eventstore/types.js';
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
  // Sends racing reactions, flag changes and edits of earlier messages: the log interleaves them, so
  // the runner folds later sends ahead of some of those events (sendsFirst).
  const raceSends = () => Promise.all(Array.from({ length: 8 }, (_, i) => sendStream(s, [alice, bob][i % 2]!, general, `race ${i % 3}`, `race ${i} @**Alice**`)));
  let earlier = await raceSends();
  for (let round = 0; round < 3; round++) {
    // earlier[odd] are Bob's; everything is in general, which Alice and Bob receive.
    const others = [
      s.api('POST', `/messages/${earlier[0]}/reactions`, bob, { emoji_name: 'tada' }),
      s.api('POST', `/messages/${earlier[1]}/reactions`, alice, { emoji_name: 'tada' }),
      s.api('POST', `/messages/${earlier[2]}/reactions`, bob, { emoji_name: 'heart' }),
      s.api('POST', '/messages/flags', bob, { messages: earlier.slice(0, 4), op: 'add', flag: 'read' }),
      s.api('POST', '/messages/flags', alice, { messages: earlier.slice(2, 6), op: 'add', flag: 'starred' }),
      s.api('POST', '/messages/flags', alice, { messages: earlier, op: 'add', flag: 'read' }),
      s.api('PATCH', `/messages/${earlier[1]}`, bob, { content: `raced edit ${round} @**Alice**` }),
      s.api('PATCH', `/messages/${earlier[3]}`, bob, { topic: `moved ${round}`, propagate_mode: 'change_one' }),
    ];
    if (round > 0) others.push(s.api('DELETE', `/messages/${ids[ids.length - 8]}/reactions`, bob, { emoji_name: 'tada' }));
    // One reaction added, removed and added again while the sends race: the removal and the last add
    // must come out in that order whatever the runner gathers.
    others.push((async () => {
      const path = `/messages/${earlier[4]}/reactions`;
      for (const method of ['POST', 'DELETE', 'POST', 'DELETE', 'POST'] as const) {
        const r = await s.api(method, path, alice, { emoji_name: 'octopus' });
        if (r.status !== 200) return r;
      }
      return s.api('POST', `/messages/${earlier[5]}/reactions`, alice, { emoji_name: 'octopus' });
    })());
    const [sent, done] = await Promise.all([raceSends(), Promise.all(others)]);
    for (const r of done) t.equal(r.status, 200, JSON.stringify(r.body));
    ids.push(...earlier);
    earlier = sent;
  }
  ids.push(...earlier);
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

  const indexes = async () => (await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`.execute(db)).rows.map((r) => r.indexdef);
  const indexesBefore = await indexes();
  t.ok(indexesBefore.some((def) => def.startsWith('CREATE INDEX messages_stream_topic_idx ')), 'the narrow indexes are there to begin with');
  const head = (await store.head()).position;
  t.equal(await new ProjectionRunner(db, store, eventByEvent, bus).rebuild(), head, 'event by event: the whole log');
  const single = await tableChecksums(db, tables);
  t.same(single, live, 'event by event gives the live tables');

  t.equal(await new ProjectionRunner(db, store, counted, bus).rebuild(), head, 'in runs: the whole log');
  t.ok(runs > 0, `bulk handlers folded ${runs} runs`);
  const types = (await db.selectFrom('events').select('type').orderBy('position').execute()).map((e) => e.type);
  const sendsAfterOthers = types.filter((type, i) => type === 'MessageSent' && ['ReactionAdded', 'MessageFlagsChanged', 'MessageEdited'].includes(types[i - 1]!)).length;
  t.ok(types.filter((type) => type === 'ReactionRemoved').length >= 6, 'the log removes reactions too');
  t.ok(sendsAfterOthers > 0, `the log has ${sendsAfterOthers} sends right after a reaction, flag change or edit`);
  const bulk = await tableChecksums(db, tables);
  t.same(bulk, single, 'in runs gives the same tables as event by event');
  // The rebuild builds the query-only indexes after the fold; each comes back as it was, under its name.
  t.same(await indexes(), indexesBefore, 'every index is back after the rebuild, as it was');
  const found = await s.api('GET', '/messages', alice, { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: 'search', operand: 'raced' }]) });
  t.ok(found.body.messages.length > 0, 'and search finds the edited messages');
});

t.test('sendsFirst moves a send only past earlier events that touch lower message ids', async (t) => {
  let position = 0;
  const event = (type: string, data: Record<string, unknown>) => ({
    position: ++position, event_id: `e${position}`, stream_id: 's', stream_version: position, type, schema_version: 1, data,
    metadata: {} as StoredEvent['metadata'], hash: '',
  });
  const send = (id: number) => event('MessageSent', { message_id: id });
  const react = (id: number) => event('ReactionAdded', { message_id: id, user_id: 1, emoji_name: 'x', emoji_code: 'x', reaction_type: 'unicode_emoji' });
  const read = (ids: number[], through: number | null = null) =>
    event('MessageFlagsChanged', { user_id: 1, op: 'add', flag: 'read', message_ids: ids, all: false, read_through: through, message_details: null });
  const edit = (id: number, move: boolean) =>
    event('MessageEdited', { message_id: id, message_ids: [id], new_topic: move ? 'elsewhere' : null, new_stream_id: null, attachment_paths: null });
  const order = (events: StoredEvent[]) => sendsFirst(allProjections, events).map((e) => e.position);
  const positions = (events: StoredEvent[]) => events.map((e) => e.position);

  let log: StoredEvent[] = [send(10), react(5), read([7, 9]), edit(8, false), send(11), send(12)];
  t.same(order(log), [1, 5, 6, 2, 3, 4], 'later sends pass reactions, flag changes and in-place edits of lower ids, which keep their order');
  log = [send(10), react(12), send(11), send(13)];
  t.same(order(log), positions(log), 'a send does not pass an event touching its id or above');
  log = [send(10), read([3], 20), send(11)];
  t.same(order(log), positions(log), 'nor a read watermark above it');
  log = [send(10), edit(4, true), send(11)];
  t.same(order(log), positions(log), 'nor a topic move');
  log = [send(10), event('UserSubscribed', { user_id: 1, stream_id: 1 }), send(11)];
  t.same(order(log), positions(log), 'nor a subscription change');
  log = [react(1), send(10), react(2), event('UserCreated', { user_id: 9 }), react(3), send(11), send(12)];
  t.same(order(log), positions(log), 'events before the first send, and after a barrier, stay where they are');
  const unreact = (id: number) => event('ReactionRemoved', { message_id: id, user_id: 1, emoji_name: 'x', emoji_code: 'x', reaction_type: 'unicode_emoji' });
  log = [send(10), react(5), read([7]), unreact(5), edit(8, false), react(6), read([8]), send(11), edit(9, false), react(5)];
  t.same(order(log), [0, 7, 1, 3, 5, 9, 2, 6, 4, 8].map((i) => log[i]!.position),
    'the passed events gather by commuting group (reactions, flag changes, in-place edits), each group in log order');
  log = [send(10), react(5), event('UserSubscribed', { user_id: 1, stream_id: 1 }), read([7]), react(6), send(11)];
  t.same(order(log), positions(log), 'no gathering across an event outside the groups');
  const eventByEvent = allProjections.map((p) => ({ ...p, bulkTypes: new Set<string>() }));
  log = [send(10), react(5), send(11)];
  t.same(sendsFirst(eventByEvent, log).map((e) => e.position), positions(log), 'without bulk folds of sends the log order stands');
});
