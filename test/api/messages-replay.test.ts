import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { messagesProjection } from '../../projections/messages.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

// The message read tables are a pure fold of the log: a rebuild gives identical rows.
t.test('rebuild reproduces the message read tables', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'messages-replay-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await s.api('POST', '/realm/filters', admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' });
  const sid = await createChannel(s, alice, 'general', [bob, admin]);
  const m1 = await sendStream(s, alice, 'general', 'bug #12', 'see #34 and @**Bob**');
  const linked = await s.api('GET', `/messages/${m1}`, bob);
  t.same(linked.body.message.topic_links, [{ text: '#12', url: 'https://tracker.example/12' }], 'linkifiers apply to topics');
  t.match(linked.body.message.content, /href="https:\/\/tracker.example\/34"/, 'and to content');
  const m2 = await sendStream(s, bob, 'general', 'other', 'second');
  await subscribe(s, alice, 'general', [carol]);
  const m3 = await sendStream(s, alice, 'general', 'other', 'third');
  await unsubscribe(s, carol, 'general', [carol]);
  const d1 = await sendDm(s, alice, [bob, carol], 'group');
  await s.api('POST', '/messages/flags', bob, { messages: [m1, m2], op: 'add', flag: 'starred' });
  await s.api('POST', '/messages/flags', bob, { messages: [m1], op: 'add', flag: 'read' });
  await s.api('POST', '/mark_all_as_read', carol);
  await s.api('POST', '/messages/flags', carol, { messages: [m3], op: 'remove', flag: 'read' });
  await s.api('POST', `/messages/${m1}/reactions`, bob, { emoji_name: 'smile' });
  await s.api('POST', `/messages/${m1}/reactions`, alice, { emoji_name: 'tada' });
  await s.api('DELETE', `/messages/${m1}/reactions`, alice, { emoji_name: 'tada' });
  await s.api('PATCH', `/messages/${m1}`, alice, { content: 'edited, no mention' });
  await s.api('PATCH', `/messages/${m2}`, bob, { topic: 'renamed', propagate_mode: 'change_all' });
  // A move to another channel, with a late joiner there and a former member: moved-reception rows.
  const dave = await s.user(Role.MEMBER, 'Dave');
  await createChannel(s, alice, 'elsewhere', [dave, carol]);
  const m4 = await sendStream(s, alice, 'general', 'moving', 'go @**topic**');
  await unsubscribe(s, dave, 'elsewhere', [dave]);
  await subscribe(s, alice, 'elsewhere', [bob]);
  await s.api('PATCH', `/messages/${m4}`, alice, { stream_id: (await s.api('GET', '/get_stream_id', alice, { stream: 'elsewhere' })).body.stream_id, propagate_mode: 'change_all' });
  // A move into a private channel its sender is not subscribed to: the sender's row and lost star.
  const hideout = await createChannel(s, admin, 'hideout', [], { invite_only: true, history_public_to_subscribers: false });
  const m5 = await sendStream(s, bob, 'general', 'hidden', 'from bob');
  await s.api('POST', '/messages/flags', bob, { messages: [m5], op: 'add', flag: 'starred' });
  await s.api('PATCH', `/messages/${m5}`, admin, { stream_id: hideout, propagate_mode: 'change_one' });
  t.equal((await s.api('GET', `/messages/${m5}`, bob)).status, 400, 'gone for its sender');
  await s.api('DELETE', `/messages/${d1}`, alice);
  await s.api('POST', `/streams/${sid}/delete_topic`, admin, { topic_name: 'renamed' });

  const tables = messagesProjection.tables as string[];
  const before = await tableChecksums(s.platform.db, tables);
  for (const table of ['messages', 'message_flags', 'message_reception_spans', 'message_moved_receptions', 'message_read_state', 'reactions']) {
    t.ok(before.find((x) => x.table === table)!.rows > 0, `the workload wrote ${table}`);
  }
  const head = await s.platform.store.head();
  t.equal(await s.platform.projections.rebuild(), head.position);
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
});
