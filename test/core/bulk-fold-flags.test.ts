import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { testMetadata } from '../helpers/platform.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { ProjectionRunner } from '../../src/projection-runner.js';
import type { Projection } from '../../src/projections-api.js';

const tables = allProjections.flatMap((p) => p.tables);

t.test('runs of flag changes fold in bulk exactly as one by one', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const users = [alice, bob, carol];
  await createChannel(s, s.owner, 'general', users);
  const ids: number[] = [];
  for (let i = 0; i < 24; i++) ids.push(await sendStream(s, users[i % 3]!, 'general', `topic ${i % 4}`, `message ${i}`));
  const dm = await sendDm(s, alice, [bob], 'a dm');
  ids.push(await sendDm(s, carol, [alice, bob], 'a group dm'));
  const carolsAll = [...ids];
  ids.push(dm);

  // Through the API, one request after another: one long run of flag changes in the log, with
  // read-state changes (compactions, a watermark) between plain bit changes of the same users.
  const flags = (as: typeof alice, op: string, flag: string, messages: number[]) => s.api('POST', '/messages/flags', as, { messages, op, flag });
  const requests = [
    () => flags(bob, 'add', 'starred', ids.slice(0, 6)),
    () => flags(bob, 'add', 'read', ids.slice(0, 10)),
    () => flags(bob, 'remove', 'starred', ids.slice(2, 4)),
    () => flags(bob, 'remove', 'read', ids.slice(5, 8)),
    () => flags(carol, 'add', 'read', ids.slice(0, 12)),
    () => flags(carol, 'add', 'collapsed', ids.slice(3, 5)),
    () => flags(carol, 'add', 'read', carolsAll), // everything read: her read state compacts
    () => flags(carol, 'remove', 'read', ids.slice(20, 22)),
    () => flags(alice, 'add', 'starred', ids.slice(10, 14)),
    () => flags(carol, 'add', 'read', ids.slice(20, 22)), // and compacts again
    () => flags(bob, 'add', 'read', ids.slice(5, 7)),
    () => s.api('POST', '/mark_all_as_read', bob),
    () => flags(bob, 'remove', 'read', ids.slice(1, 3)),
    () => flags(bob, 'add', 'read', ids.slice(2, 3)),
    () => flags(carol, 'remove', 'collapsed', ids.slice(3, 4)),
    () => flags(alice, 'add', 'read', ids.slice(0, 5)),
    () => flags(alice, 'remove', 'starred', ids.slice(11, 12)),
  ];
  for (const request of requests) {
    const r = await request();
    t.equal(r.status, 200, JSON.stringify(r.body));
  }
  t.ok(await s.platform.waitForProjections((await s.platform.store.head()).position, 30_000), 'the live fold reaches the requests');
  const carolsWatermark = await s.platform.db.selectFrom('message_read_state').select('read_through').where('user_id', '=', carol.id).executeTakeFirstOrThrow();
  // Marking everything read changed the messages she had not read nor sent (she sent every third
  // channel message and the group DM); the watermark went to the last of them.
  const carolsUnread = carolsAll.filter((_, i) => i < 24 && i % 3 !== 2);
  t.equal(Number(carolsWatermark.read_through), Math.max(...carolsUnread), "Carol's read state compacted up to the last message she marked");

  // Straight into the log: changes the API would leave out (starring a starred message, unreading
  // an unread one, a repeated id, a flag that is not stored, watermarks up and down), many per user.
  let seed = 7;
  const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  for (let i = 0; i < 150; i++) {
    const user = pick(users);
    const some = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(ids)).sort((a, b) => a - b);
    const watermark = rand() < 0.05 ? pick(ids) : null;
    const data = {
      user_id: user.id, op: watermark === null ? pick(['add', 'remove']) : 'add', flag: watermark === null ? pick(['read', 'read', 'starred', 'collapsed', 'mentioned']) : 'read',
      message_ids: some, all: false, read_through: watermark, message_details: null,
    };
    await s.platform.store.append([{ streamId: `message-flags-${user.id}`, expectedVersion: undefined, events: [{ type: 'MessageFlagsChanged', data }] }], testMetadata(user.id));
  }
  const head = (await s.platform.store.head()).position;
  t.ok(await s.platform.waitForProjections(head, 30_000), 'the live fold reaches the head');
  const live = await tableChecksums(s.platform.db, tables);
  const flagsSeen = async () => {
    const seen: Record<string, Record<number, string[]>> = {};
    for (const user of users) {
      const r = await s.api('GET', '/messages', user, { anchor: 'oldest', num_before: 0, num_after: 100 });
      seen[user.email] = Object.fromEntries(r.body.messages.map((m: { id: number; flags: string[] }) => [m.id, m.flags]));
    }
    return seen;
  };
  const liveFlags = await flagsSeen();
  const flagRows = live.find((x) => x.table === 'message_flags')!.rows;
  t.ok(flagRows > 20, `the workload left ${flagRows} flag rows`);

  const { db, store, bus } = s.platform;
  const runs: number[] = [];
  const counted: Projection[] = allProjections.map((p) => ({
    ...p,
    applyRun: p.applyRun && (async (trx, events) => {
      if (events[0]!.type === 'MessageFlagsChanged') runs.push(events.length);
      return p.applyRun!(trx, events);
    }),
  }));
  const eventByEvent: Projection[] = allProjections.map((p) => ({ ...p, bulkTypes: new Set<string>(), applyRun: undefined }));

  t.equal(await new ProjectionRunner(db, store, eventByEvent, bus).rebuild(), head, 'event by event: the whole log');
  t.same(await tableChecksums(db, tables), live, 'event by event gives the live tables');
  t.equal(await new ProjectionRunner(db, store, counted, bus).rebuild(), head, 'in runs: the whole log');
  t.ok(runs.some((n) => n >= requests.length + 150), `flag changes folded in runs of ${runs.join(', ')} events`);
  t.same(await tableChecksums(db, tables), live, 'in runs gives the same tables');
  t.same(await flagsSeen(), liveFlags, 'every user reads the same flags as before');
});
