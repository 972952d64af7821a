import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream, subscribe } from '../helpers/channels-fixture.js';
import { move, poll, queueOf } from '../helpers/moves-fixture.js';

// The sender of a message moved into a channel they are not subscribed to loses it like everyone
// else (zerver/actions/message_edit.py, do_update_message: the UserMessage rows of the old
// channel's subscribers not subscribed to the new channel are deleted, the sender's included).

const ids = (r: { body: any }) => (r.body.messages as Array<{ id: number }>).map((m) => m.id);
const fetch = (s: TestServer, u: TestUser, narrow: unknown[]) =>
  s.api('GET', '/messages', u, { anchor: 'newest', num_before: 100, num_after: 0, narrow });

const shared = startTestServer(t);

t.test('moved into a private channel the sender is not subscribed to: gone for the sender', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const a = await createChannel(s, admin, 'snd-a', [bob]);
  const priv = await createChannel(s, admin, 'snd-priv', [], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, bob, 'snd-a', 'secret plans', 'the zanzibar plan');
  await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'add', flag: 'starred' });
  await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'remove', flag: 'read' });
  const queue = await queueOf(s, bob);
  t.same(queue.body.starred_messages, [m], 'starred before the move');
  await move(s, admin, m, priv);

  const events = await poll(s, bob, queue);
  t.match(events, [{ type: 'delete_message', message_type: 'stream', stream_id: a, topic: 'secret plans', message_ids: [m] }], 'the sender hears of a deletion');
  t.equal(events.length, 1, 'and of no update');

  const single = await s.api('GET', `/messages/${m}`, bob);
  t.equal(single.status, 400);
  t.match(single.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  t.match((await s.api('GET', `/messages/${m}/history`, bob)).body, { result: 'error', msg: 'Invalid message(s)' });
  for (const narrow of [[], [{ operator: 'sender', operand: bob.email }], [{ operator: 'sender', operand: bob.id }], [{ operator: 'id', operand: m }],
    [{ operator: 'topic', operand: 'secret plans' }], [{ operator: 'search', operand: 'zanzibar' }], [{ operator: 'is', operand: 'starred' }],
    [{ operator: 'is', operand: 'unread' }], [{ operator: 'channel', operand: a }]]) {
    const r = await fetch(s, bob, narrow);
    t.equal(r.status, 200, JSON.stringify(narrow));
    t.notOk(ids(r).includes(m), `not in ${JSON.stringify(narrow)}`);
  }
  const viaChannel = await fetch(s, bob, [{ operator: 'channel', operand: priv }]);
  t.notOk(viaChannel.status === 200 && ids(viaChannel).includes(m), 'nor through the private channel');
  const matches = await s.api('GET', '/messages/matches_narrow', bob, { msg_ids: [m], narrow: [{ operator: 'sender', operand: bob.email }] });
  t.same(matches.body.messages, {}, 'matches_narrow knows nothing of it');
  t.match((await s.api('POST', `/messages/${m}/reactions`, bob, { emoji_name: 'smile' })).body, { result: 'error', msg: 'Invalid message(s)' });
  t.match((await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'add', flag: 'starred' })).body, { result: 'error', msg: 'Invalid message(s)' });
  t.match((await s.api('PATCH', `/messages/${m}`, bob, { content: 'edited' })).body, { result: 'error', msg: 'Invalid message(s)' });
  const topics = await s.api('GET', `/users/me/${a}/topics`, bob);
  t.notOk((topics.body.topics as Array<{ name: string }>).some((x) => x.name === 'secret plans'), 'the old channel has no such topic any more');

  const fresh = await queueOf(s, bob);
  t.same(fresh.body.starred_messages, [], 'its star is gone');
  t.notOk(fresh.body.unread_msgs.streams.some((x: { unread_message_ids: number[] }) => x.unread_message_ids.includes(m)), 'not unread in /register');
  t.same(fresh.body.unread_msgs.count, 0);

  // Subscribing to a channel with protected history does not give back what was sent before.
  await subscribe(s, admin, 'snd-priv', [bob]);
  t.equal((await s.api('GET', `/messages/${m}`, bob)).status, 400, 'subscribed later (protected history): still not readable');
  t.same(ids(await fetch(s, bob, [{ operator: 'channel', operand: priv }])), [], 'nor in the channel');
  t.same(ids(await fetch(s, bob, [{ operator: 'sender', operand: bob.email }])).includes(m), false);
  const topicsPriv = await s.api('GET', `/users/me/${priv}/topics`, bob);
  t.same(topicsPriv.body.topics, [], 'no topic of it listed');

  // Moved back into a channel the sender is subscribed to: theirs again (as read, without its star).
  const back = await queueOf(s, bob);
  await move(s, admin, m, a);
  t.match(await poll(s, bob, back), [{ type: 'update_message', message_ids: [m], stream_id: priv, new_stream_id: a }]);
  const again = await s.api('GET', `/messages/${m}`, bob);
  t.equal(again.status, 200);
  t.same(again.body.message.flags, ['read'], 'received again, read, no star');
  t.ok(ids(await fetch(s, bob, [{ operator: 'sender', operand: bob.email }])).includes(m));
  t.ok(ids(await fetch(s, bob, [])).includes(m));
});

t.test('moved into a public channel the sender is not subscribed to: readable, historical', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const a = await createChannel(s, admin, 'snd-pub-a', [bob]);
  const pub = await createChannel(s, admin, 'snd-pub-b', []);
  const m = await sendStream(s, bob, 'snd-pub-a', 'open', 'an open message');
  await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'add', flag: 'starred' });
  const queue = await queueOf(s, bob);
  await move(s, admin, m, pub);
  const events = await poll(s, bob, queue);
  t.match(events, [{ type: 'update_message', message_ids: [m], stream_id: a, new_stream_id: pub }]);
  t.equal(events.length, 1);
  t.same([...(events[0]?.flags ?? [])].sort(), ['historical', 'read']);
  const single = await s.api('GET', `/messages/${m}`, bob);
  t.equal(single.status, 200);
  t.same([...single.body.message.flags].sort(), ['historical', 'read'], 'not received: historical, no star');
  t.notOk(ids(await fetch(s, bob, [])).includes(m), 'not in the history narrow');
  t.notOk(ids(await fetch(s, bob, [{ operator: 'sender', operand: bob.email }])).includes(m), 'a sender narrow searches what the user has (a history narrow)');
  t.ok(ids(await fetch(s, bob, [{ operator: 'channel', operand: pub }])).includes(m), 'the public channel shows it');
  t.equal((await s.api('GET', `/messages/${m}/history`, bob)).status, 200);
});

t.test('moved into a private channel with shared history: readable once subscribed, historical', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, admin, 'snd-sh-a', [bob]);
  const sh = await createChannel(s, admin, 'snd-sh-b', [], { invite_only: true, history_public_to_subscribers: true });
  const m = await sendStream(s, bob, 'snd-sh-a', 'topic', 'shared later');
  await move(s, admin, m, sh);
  t.equal((await s.api('GET', `/messages/${m}`, bob)).status, 400, 'not subscribed: not readable');
  await subscribe(s, admin, 'snd-sh-b', [bob]);
  const single = await s.api('GET', `/messages/${m}`, bob);
  t.equal(single.status, 200);
  t.same([...single.body.message.flags].sort(), ['historical', 'read']);
});

t.test('a sender subscribed to the destination keeps the message', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, admin, 'snd-in-a', [bob]);
  const dest = await createChannel(s, admin, 'snd-in-b', [bob], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, bob, 'snd-in-a', 'topic', 'kept');
  await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'add', flag: 'starred' });
  await move(s, admin, m, dest);
  const single = await s.api('GET', `/messages/${m}`, bob);
  t.equal(single.status, 200);
  t.same([...single.body.message.flags].sort(), ['read', 'starred'], 'received, flags kept');
  t.ok(ids(await fetch(s, bob, [{ operator: 'channel', operand: dest }])).includes(m));
});

t.test('a sender never subscribed to the old channel keeps the message (the real server deletes only its subscribers\' rows)', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, admin, 'snd-out-a', []);
  const priv = await createChannel(s, admin, 'snd-out-priv', [], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, carol, 'snd-out-a', 'topic', 'from outside');
  await move(s, admin, m, priv);
  t.ok(ids(await fetch(s, carol, [{ operator: 'sender', operand: carol.email }])).includes(m), 'still in her history');
  // Reaching it by its id needs reading rights now: a private channel she is not subscribed to.
  const single = await s.api('GET', `/messages/${m}`, carol);
  t.equal(single.body.msg, 'Invalid message(s)');
});
