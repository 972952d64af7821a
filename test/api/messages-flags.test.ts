import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { FlagBit } from '../../src/domain/messages/flags.js';

const newest = (narrow: unknown[] = [], extra: Record<string, unknown> = {}) => ({ anchor: 'newest', num_before: 100, num_after: 0, narrow, ...extra });

// One server per file (each start costs seconds); every test uses its own users and channels.
const shared = startTestServer(t);

t.test('flags, mark as read, unread counts and topic policies', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'general', [bob]);
  await createChannel(s, alice, 'random', [bob]);
  const g1 = await sendStream(s, alice, 'general', 'a', 'one');
  const g2 = await sendStream(s, alice, 'general', 'b', 'two');
  const g3 = await sendStream(s, alice, 'general', 'b', 'three');
  const r1 = await sendStream(s, alice, 'random', 'x', 'four');
  const d1 = await sendDm(s, alice, [bob], 'five');

  const unreadIds = async () =>
    (await s.api('GET', '/messages', bob, newest([{ operator: 'is', operand: 'unread' }]))).body.messages.map((m: { id: number }) => m.id);
  t.same(await unreadIds(), [g1, g2, g3, r1, d1]);

  const badFlag = await s.api('POST', '/messages/flags', bob, { messages: [g1], op: 'add', flag: 'mentioned' });
  t.equal(badFlag.body.msg, "Flag not editable: 'mentioned'");
  const unknownFlag = await s.api('POST', '/messages/flags', bob, { messages: [g1], op: 'add', flag: 'bogus' });
  t.equal(unknownFlag.body.msg, "Invalid flag: 'bogus'");
  const badOp = await s.api('POST', '/messages/flags', bob, { messages: [g1], op: 'toggle', flag: 'read' });
  t.equal(badOp.body.msg, "Invalid message flag operation: 'toggle'");

  const star = await s.api('POST', '/messages/flags', bob, { messages: [g2], op: 'add', flag: 'starred' });
  t.same(star.body.messages, [g2]);
  t.same((await s.api('GET', `/messages/${g2}`, bob)).body.message.flags, ['starred']);

  await s.api('POST', '/mark_topic_as_read', bob, { stream_id: sid, topic_name: 'b' });
  t.same(await unreadIds(), [g1, r1, d1]);
  await s.api('POST', '/mark_stream_as_read', bob, { stream_id: sid });
  t.same(await unreadIds(), [r1, d1]);
  await s.api('POST', '/messages/flags', bob, { messages: [g2], op: 'remove', flag: 'read' });
  t.same(await unreadIds(), [g2, r1, d1]);
  const narrowed = await s.api('POST', '/messages/flags/narrow', bob, {
    anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'is', operand: 'dm' }], op: 'add', flag: 'read',
  });
  t.match(narrowed.body, { processed_count: 1, updated_count: 1, first_processed_id: d1, last_processed_id: d1, found_oldest: true, found_newest: true });
  t.same(await unreadIds(), [g2, r1]);

  // Muted and followed topics change the narrows and the unread count.
  await s.api('POST', '/user_topics', bob, { stream_id: sid, topic: 'b', visibility_policy: 1 });
  await s.api('POST', '/user_topics', bob, { stream_id: sid, topic: 'a', visibility_policy: 3 });
  const muted = await s.api('GET', '/messages', bob, newest([{ operator: 'is', operand: 'muted' }]));
  t.same(muted.body.messages.map((m: { id: number }) => m.id), [g2, g3]);
  const followed = await s.api('GET', '/messages', bob, newest([{ operator: 'is', operand: 'followed' }]));
  t.same(followed.body.messages.map((m: { id: number }) => m.id), [g1]);
  const reg = await s.api('POST', '/register', bob, { fetch_event_types: ['message', 'update_message_flags'] });
  t.equal(reg.body.unread_msgs.count, 1, 'the unread message in a muted topic is not counted');
  t.same(reg.body.unread_msgs.streams.map((x: { unread_message_ids: number[] }) => x.unread_message_ids).flat().sort(), [g2, r1].sort());

  const all = await s.api('POST', '/mark_all_as_read', bob);
  t.equal(all.body.complete, true);
  t.same(await unreadIds(), []);
  const later = await sendStream(s, alice, 'general', 'a', 'six');
  t.same(await unreadIds(), [later], 'messages after mark-all-as-read are unread');
});

t.test('bad input is a 4xx, never a 500', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'general-1', []);
  const m = await sendStream(s, alice, 'general-1', 't', 'x');
  const huge = '99999999999999999999';
  const calls: Array<[string, string, Record<string, unknown>]> = [
    ['GET', '/messages', { anchor: 'newest', num_before: -1, num_after: 1 }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: '{"operator":"is"}' }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: '[{"operator":"channel","operand":{"x":1}}]' }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: `[{"operator":"id","operand":${huge}}]` }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: `[{"operator":"sender","operand":${huge}}]` }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: `[["channel","${huge}"]]` }],
    ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 1, narrow: 'not json' }],
    ['GET', `/messages/${huge}`, {}],
    ['PATCH', `/messages/${m}`, { stream_id: huge }],
    ['PATCH', `/messages/${m}`, {}],
    ['DELETE', `/messages/${huge}`, {}],
    ['POST', '/messages', { type: 'stream', to: huge, topic: 't', content: 'x' }],
    ['POST', '/messages', { type: 'private', to: `[${huge}]`, content: 'x' }],
    ['POST', '/messages', { type: 'private', to: '[{"a":1}]', content: 'x' }],
    ['POST', '/messages', { type: 'stream', to: '[1,2]', topic: 't', content: 'x' }],
    ['POST', '/messages/flags', { messages: `[${huge}]`, op: 'add', flag: 'starred' }],
    ['POST', '/messages/flags', { messages: 'nope', op: 'add', flag: 'read' }],
    ['POST', `/messages/${m}/reactions`, { emoji_name: 'smile', reaction_type: 'weird' }],
    ['POST', '/mark_stream_as_read', { stream_id: huge }],
    ['POST', `/streams/${huge}/delete_topic`, { topic_name: 't' }],
    ['POST', '/messages/render', { content: 'x'.repeat(10_001) }],
  ];
  for (const [method, path, params] of calls) {
    const r = await s.api(method, path, alice, params);
    t.ok(r.status >= 400 && r.status < 500, `${method} ${path} ${JSON.stringify(params).slice(0, 80)} → ${r.status} ${r.body.msg}`);
    t.equal(r.body.result, 'error');
  }
  // Out-of-range ids are simply not found.
  const beyond = await s.api('GET', '/messages', alice, { anchor: huge, num_before: 1, num_after: 1 });
  t.same(beyond.body.messages.map((x: { id: number }) => x.id), [m]);
  t.same((await s.api('GET', '/messages/matches_narrow', alice, { msg_ids: `[${huge}]`, narrow: '[]' })).body.messages, {});
  t.equal((await s.api('POST', '/messages/render', alice, { content: '**bold** :smile:' })).body.rendered,
    '<p><strong>bold</strong> <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>');
  void sid;
});

t.test('read state stays sparse: reading everything in order compacts to the watermark', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'general-2', [bob]);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await sendStream(s, alice, 'general-2', 't', `m${i}`));
  const rowsOf = async (userId: number) =>
    s.platform.db.selectFrom('message_flags').select(['message_id', 'flags']).where('user_id', '=', userId).execute();
  t.same(await rowsOf(bob.id), [], 'receiving costs a subscriber no rows');
  await s.api('POST', '/messages/flags', bob, { messages: [ids[1]], op: 'add', flag: 'read' });
  t.equal((await rowsOf(bob.id)).length, 1, 'reading out of order keeps an exception');
  await s.api('POST', '/messages/flags', bob, { messages: [ids[0]], op: 'add', flag: 'read' });
  for (const id of ids.slice(2)) await s.api('POST', '/messages/flags', bob, { messages: [id], op: 'add', flag: 'read' });
  t.same(await rowsOf(bob.id), [], 'once all is read, the exceptions fold into the watermark');
  const state = await s.platform.db.selectFrom('message_read_state').selectAll().where('user_id', '=', bob.id).executeTakeFirst();
  t.equal(state?.read_through, ids[4]);
  const unread = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(unread.body.messages, []);
  await s.api('POST', '/messages/flags', bob, { messages: [ids[2]], op: 'remove', flag: 'read' });
  const again = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(again.body.messages.map((m: { id: number }) => m.id), [ids[2]], 'marking unread below the watermark works');
  // Read again below the watermark, then newer messages read in order: the watermark moves on and
  // only rows it passed are cleared (the redundant READ row below the old watermark may stay).
  await s.api('POST', '/messages/flags', bob, { messages: [ids[2]], op: 'add', flag: 'read' });
  const later: number[] = [];
  for (let i = 0; i < 3; i++) later.push(await sendStream(s, alice, 'general-2', 't', `n${i}`));
  await s.api('POST', '/messages/flags', bob, { messages: [later[1]], op: 'add', flag: 'read' });
  t.same((await rowsOf(bob.id)).map((r) => r.message_id).filter((id) => id > ids[4]!), [later[1]], 'an out-of-order read above the watermark is an exception');
  await s.api('POST', '/messages/flags', bob, { messages: [later[0], later[2]], op: 'add', flag: 'read' });
  const moved = await s.platform.db.selectFrom('message_read_state').selectAll().where('user_id', '=', bob.id).executeTakeFirst();
  t.equal(moved?.read_through, later[2], 'the watermark moves past everything read');
  t.same((await rowsOf(bob.id)).filter((r) => r.message_id > ids[4]!), [], 'the READ rows it passed are gone');
  t.ok((await rowsOf(bob.id)).every((r) => r.message_id <= ids[4]! && (r.flags & FlagBit.UNREAD) === 0), 'what is left below the old watermark only says read');
  const none = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 20, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(none.body.messages, [], 'nothing reads as unread');
});
