import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { validateListedMessage } from '../helpers/openapi-message.js';

const register = {
  event_types: ['message', 'update_message', 'delete_message', 'reaction', 'update_message_flags'],
  fetch_event_types: ['message', 'update_message_flags', 'recent_private_conversations', 'starred_messages'],
  client_capabilities: { bulk_message_deletion: true },
  apply_markdown: true,
};

// One server per file (each start costs seconds); every test uses its own users and channels.
const shared = startTestServer(t);

t.test('message events keep registered state equal to a fresh register', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const sid = await createChannel(s, alice, 'general', [bob, carol]);

  let m1 = 0;
  const sent = await verifyAction(t, s, bob, async () => {
    m1 = await sendStream(s, alice, 'general', 'hello', 'hi @**Bob** and @**all**');
  }, { register });
  t.equal(sent.length, 1);
  t.match(sent[0], { type: 'message', message: { id: m1, stream_id: sid, subject: 'hello', display_recipient: 'general' } });
  t.same([...sent[0]!.flags].sort(), ['mentioned', 'stream_wildcard_mentioned', 'wildcard_mentioned'].sort());
  const { flags: _flags, ...eventMessage } = { ...sent[0]!.message, flags: [] };
  t.ok(validateListedMessage({ ...eventMessage, flags: sent[0]!.flags }), JSON.stringify(validateListedMessage.errors));

  await s.api('POST', '/users/me/alert_words', carol, { alert_words: ['Zebra'] });
  const alerted = await verifyAction(t, s, carol, () => sendStream(s, alice, 'general', 'hello', 'a zebra appears'), { register });
  t.same(alerted[0]!.flags, ['has_alert_word']);
  const own = await verifyAction(t, s, alice, () => sendStream(s, alice, 'general', 'hello', 'my own'), { register });
  t.same(own[0]!.flags, ['read']);

  await verifyAction(t, s, bob, () => sendDm(s, alice, [bob], 'a direct message'), { register });
  await verifyAction(t, s, bob, () => sendDm(s, alice, [bob, carol], 'a group message'), { register });
  await verifyAction(t, s, bob, () => sendDm(s, bob, [bob], 'a note to self'), { register });

  const read = await verifyAction(t, s, bob, () => s.api('POST', '/messages/flags', bob, { messages: [m1], op: 'add', flag: 'read' }), { register });
  t.match(read, [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [m1], all: false }]);
  const unread = await verifyAction(t, s, bob, () => s.api('POST', '/messages/flags', bob, { messages: [m1], op: 'remove', flag: 'read' }), { register });
  t.match(unread, [{ type: 'update_message_flags', op: 'remove', flag: 'read', messages: [m1], message_details: { [m1]: { type: 'stream', stream_id: sid, topic: 'hello', mentioned: true } } }]);
  await verifyAction(t, s, bob, () => s.api('POST', '/messages/flags', bob, { messages: [m1], op: 'add', flag: 'starred' }), { register });
  await verifyAction(t, s, bob, () => s.api('POST', '/mark_all_as_read', bob), { register });

  const m2 = await sendStream(s, alice, 'general', 'hello', 'second');
  const moved = await verifyAction(t, s, bob, () => s.api('PATCH', `/messages/${m2}`, alice, { topic: 'elsewhere', propagate_mode: 'change_one' }), { register });
  t.match(moved, [{ type: 'update_message', message_id: m2, message_ids: [m2], orig_subject: 'hello', subject: 'elsewhere', stream_id: sid, propagate_mode: 'change_one' }]);
  const edited = await verifyAction(t, s, bob, () => s.api('PATCH', `/messages/${m2}`, alice, { content: 'changed' }), { register });
  t.match(edited, [{ type: 'update_message', message_id: m2, orig_content: 'second', content: '<p>changed</p>', rendered_content: '<p>changed</p>' }]);

  const reacted = await verifyAction(t, s, bob, () => s.api('POST', `/messages/${m2}/reactions`, carol, { emoji_name: 'tada' }), { register });
  t.match(reacted, [{ type: 'reaction', op: 'add', message_id: m2, emoji_name: 'tada', reaction_type: 'unicode_emoji', user_id: carol.id }]);
  await verifyAction(t, s, bob, () => s.api('DELETE', `/messages/${m2}/reactions`, carol, { emoji_name: 'tada' }), { register });

  const deleted = await verifyAction(t, s, bob, () => s.api('DELETE', `/messages/${m1}`, alice), {
    register,
    ignoreKeys: ['max_message_id'],
  });
  t.match(deleted, [{ type: 'delete_message', message_type: 'stream', message_ids: [m1], stream_id: sid, topic: 'hello' }]);
});

t.test('who gets message events', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const guest = await s.user(Role.GUEST, 'Guest');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await createChannel(s, alice, 'secret-1', [bob], { invite_only: true });
  await createChannel(s, alice, 'public-1', [bob]);

  const outsiders = await Promise.all([eve, guest, admin].map(async (u) => ({ u, reg: await s.api('POST', '/register', u, { event_types: ['message', 'update_message', 'delete_message', 'reaction'] }) })));
  const bobReg = await s.api('POST', '/register', bob, { event_types: ['message', 'delete_message'], client_capabilities: { bulk_message_deletion: false } });
  const aliceReg = await s.api('POST', '/register', alice, { event_types: ['message'] });
  const narrowReg = await s.api('POST', '/register', bob, { event_types: ['message'], narrow: [['stream', 'public-1']] });

  const p = await sendStream(s, alice, 'secret-1', 't', 'private words', { queue_id: aliceReg.body.queue_id, local_id: 'local-1' });
  const pub = await sendStream(s, alice, 'public-1', 't', 'public words');
  const dm = await sendDm(s, alice, [bob], 'just us');
  await s.api('PATCH', `/messages/${p}`, alice, { content: 'edited private words' });
  await s.api('POST', `/messages/${p}/reactions`, bob, { emoji_name: 'smile' });
  await s.api('DELETE', `/messages/${dm}`, alice);

  for (const { u, reg } of outsiders) {
    const polled = await s.api('GET', '/events', u, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
    t.same(polled.body.events, [], `user ${u.id} sees no event about private channel messages, DMs or unsubscribed channels`);
  }
  const bobEvents = await s.api('GET', '/events', bob, { queue_id: bobReg.body.queue_id, last_event_id: bobReg.body.last_event_id, dont_block: true });
  t.same(bobEvents.body.events.map((e: { type: string }) => e.type), ['message', 'message', 'message', 'delete_message']);
  t.match(bobEvents.body.events[3], { type: 'delete_message', message_id: dm, message_type: 'private' });
  t.notOk('message_ids' in bobEvents.body.events[3], 'without bulk_message_deletion: one event per message');
  t.notOk('local_message_id' in bobEvents.body.events[0]);
  const aliceEvents = await s.api('GET', '/events', alice, { queue_id: aliceReg.body.queue_id, last_event_id: aliceReg.body.last_event_id, dont_block: true });
  t.equal(aliceEvents.body.events[0].local_message_id, 'local-1', 'the sending queue gets its local id back');
  t.equal(aliceEvents.body.events[0].message.content, 'private words', 'apply_markdown false: raw content');
  const narrowed = await s.api('GET', '/events', bob, { queue_id: narrowReg.body.queue_id, last_event_id: narrowReg.body.last_event_id, dont_block: true });
  t.same(narrowed.body.events.map((e: { message: { id: number } }) => e.message.id), [pub], 'a queue narrow filters message events');
});

t.test('delete_topic events: delete_message and the new first_message_id', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'general-2', [admin]);
  const first = await sendStream(s, alice, 'general-2', 'doomed', 'one');
  const second = await sendStream(s, alice, 'general-2', 'doomed', 'two');
  const kept = await sendStream(s, alice, 'general-2', 'kept', 'three');
  const events = await verifyAction(t, s, admin, () => s.api('POST', `/streams/${sid}/delete_topic`, admin, { topic_name: 'doomed' }), {
    register: {
      event_types: ['delete_message', 'stream', 'message', 'update_message_flags'],
      fetch_event_types: ['stream', 'message', 'update_message_flags'],
      client_capabilities: { bulk_message_deletion: true },
    },
    ignoreKeys: ['max_message_id'],
  });
  const deletion = events.find((e) => e.type === 'delete_message');
  t.same([...(deletion?.message_ids ?? [])].sort((a: number, b: number) => a - b), [first, second]);
  t.match(events.find((e) => e.type === 'stream'), { op: 'update', stream_id: sid, property: 'first_message_id', value: kept });
});
