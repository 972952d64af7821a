import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';
import { verifyAction } from '../helpers/verify-action.js';

// The rules of POST /messages/flags, the mark-as-read endpoints and unread_msgs, as the real
// server's message-flag tests exercise them.

const shared = startTestServer(t);

/** A queue of the user's flag events; each call returns what arrived since the previous one. */
async function flagEvents(s: TestServer, user: TestUser) {
  const reg = await s.api('POST', '/register', user, { event_types: ['update_message_flags'] });
  let last = reg.body.last_event_id as number;
  return async () => {
    const res = await s.api('GET', '/events', user, { queue_id: reg.body.queue_id, last_event_id: last, dont_block: true });
    const events = (res.body.events as Array<Record<string, unknown>>).filter((e) => e.type !== 'heartbeat');
    if (events.length > 0) last = events[events.length - 1]!.id as number;
    return events.map(({ id: _id, ...e }) => e);
  };
}

const flags = (s: TestServer, as: TestUser, messages: unknown, op: string, flag: string) => s.api('POST', '/messages/flags', as, { messages, op, flag });
const flagsOf = async (s: TestServer, as: TestUser, id: number) => (await s.api('GET', `/messages/${id}`, as)).body.message?.flags;
const unreadMsgs = async (s: TestServer, as: TestUser) => (await s.api('POST', '/register', as, { fetch_event_types: ['message', 'update_message_flags'] })).body.unread_msgs;

t.test('errors: the flag first, then whether it may change, then the operation', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const dm = await sendDm(s, alice, [bob], 'hello');
  const cases: Array<[string, string, string]> = [
    ['bogus', 'invalid', "Invalid flag: 'invalid'"],
    ['bogus', 'mentioned', "Flag not editable: 'mentioned'"],
    ['bogus', 'starred', "Invalid message flag operation: 'bogus'"],
    ['add', 'is_private', "Invalid flag: 'is_private'"],
    ['add', 'active_mobile_push_notification', "Invalid flag: 'active_mobile_push_notification'"],
    ['add', 'wildcard_mentioned', "Invalid flag: 'wildcard_mentioned'"],
    ['add', 'summarize_in_stream', "Invalid flag: 'summarize_in_stream'"],
    ['add', 'group_mentioned', "Flag not editable: 'group_mentioned'"],
    ['add', 'force_expand', "Flag not editable: 'force_expand'"],
    ['add', 'stream_wildcard_mentioned', "Flag not editable: 'stream_wildcard_mentioned'"],
    ['add', 'has_alert_word', "Flag not editable: 'has_alert_word'"],
    ['remove', 'historical', "Flag not editable: 'historical'"],
  ];
  for (const [op, flag, msg] of cases) {
    const r = await flags(s, bob, [dm], op, flag);
    t.same([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', msg], `${op} ${flag}`);
  }
});

t.test('the response echoes the ids asked for; the event lists what changed, even nothing', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const d1 = await sendDm(s, alice, [bob], 'one');
  const d2 = await sendDm(s, alice, [bob], 'two');
  const events = await flagEvents(s, bob);
  const first = await flags(s, bob, [d2, d1, d2], 'add', 'read');
  t.same(first.body, { result: 'success', msg: '', messages: [d2, d1, d2] });
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [d2, d1], all: false }]);
  const again = await flags(s, bob, [d1], 'add', 'read');
  t.same(again.body.messages, [d1]);
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: false }], 'an event even when nothing changed');
  await flags(s, bob, [d1, d2], 'remove', 'read');
  t.same(await events(), [{
    type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'read', messages: [d1, d2], all: false,
    message_details: { [d1]: { type: 'private', user_ids: [alice.id] }, [d2]: { type: 'private', user_ids: [alice.id] } },
  }]);
});

t.test('messages never received hold the default: read, nothing else', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const guest = await s.user(Role.GUEST, 'Guest');
  await createChannel(s, alice, 'flags-public', [bob]);
  const dm = await sendDm(s, alice, [bob], 'private');
  const missing = 99_999_999;
  // Changes that leave the default as it is need no access: no error, nothing changes.
  for (const [id, op, flag] of [[missing, 'add', 'read'], [missing, 'remove', 'starred'], [missing, 'remove', 'collapsed'], [dm, 'add', 'read'], [dm, 'remove', 'starred']] as const) {
    const r = await flags(s, carol, [id], op, flag);
    t.equal(r.status, 200, `${op} ${flag} on ${id === dm ? 'a DM of others' : 'a missing id'}`);
  }
  // Changes away from it do.
  for (const [id, op, flag] of [[missing, 'remove', 'read'], [missing, 'add', 'starred'], [dm, 'remove', 'read'], [dm, 'add', 'starred'], [dm, 'add', 'collapsed']] as const) {
    const r = await flags(s, carol, [id], op, flag);
    t.same([r.status, r.body.msg], [400, 'Invalid message(s)'], `${op} ${flag} on ${id === dm ? 'a DM of others' : 'a missing id'}`);
  }
  // A public channel's message: collapsing it gives Carol a historical message.
  const m = await sendStream(s, alice, 'flags-public', 't', 'public');
  t.equal((await flags(s, carol, [m], 'add', 'collapsed')).status, 200);
  t.same(await flagsOf(s, carol, m), ['read', 'collapsed', 'historical']);
  await flags(s, carol, [m], 'add', 'starred');
  const starred = await s.api('GET', '/messages', carol, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }] });
  t.same(starred.body.messages.map((x: { id: number }) => x.id), [m], 'a starred message not received is in the history');
  t.same((await flags(s, guest, [m], 'add', 'starred')).body.msg, 'Invalid message(s)', 'a guest has no access to an unsubscribed public channel');
});

t.test('marking unread: only in channels the user is subscribed to', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, alice, 'flags-later', []);
  const before = await sendStream(s, alice, 'flags-later', 't', 'before carol');
  const events = await flagEvents(s, carol);
  await flags(s, carol, [before], 'remove', 'read');
  t.same(await events(), [{ type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'read', messages: [], all: false, message_details: {} }], 'skipped while not subscribed');
  t.same(await flagsOf(s, carol, before), ['read', 'historical']);

  await subscribe(s, alice, 'flags-later', [carol]);
  const after = await sendStream(s, alice, 'flags-later', 't', 'after carol');
  await events();
  await flags(s, carol, [before, after], 'remove', 'read');
  const sid = (await s.api('GET', '/get_stream_id', carol, { stream: 'flags-later' })).body.stream_id;
  t.same(await events(), [{
    type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'read', messages: [before], all: false,
    message_details: { [before]: { type: 'stream', stream_id: sid, topic: 't', unmuted_stream_msg: true } },
  }], 'a message sent before subscribing can be marked unread; the newer one already was');
  t.same(await flagsOf(s, carol, before), ['historical']);
  const unread = await unreadMsgs(s, carol);
  t.same(unread.streams, [{ stream_id: sid, topic: 't', unread_message_ids: [before, after] }]);
  t.equal(unread.count, 2);
  const isUnread = await s.api('GET', '/messages', carol, { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'is', operand: 'unread' }] });
  t.same(isUnread.body.messages.map((x: { id: number }) => x.id), [before, after], 'a message marked unread joins the history');

  // Leaving the channel marks its messages read, and says so.
  await unsubscribe(s, carol, 'flags-later', [carol]);
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [before, after], all: false }]);
  t.same((await unreadMsgs(s, carol)).streams, []);
  t.same(await flagsOf(s, carol, after), ['read']);
  await subscribe(s, alice, 'flags-later', [carol]);
  t.same((await unreadMsgs(s, carol)).streams, [], 'subscribing again does not bring them back as unread');
});

t.test('mark_stream_as_read, mark_topic_as_read and mark_all_as_read', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'flags-mark', [bob]);
  const other = await createChannel(s, alice, 'flags-mark-other', [bob]);
  const a1 = await sendStream(s, alice, 'flags-mark', 'Alpha', 'a1');
  const b1 = await sendStream(s, alice, 'flags-mark', 'beta', 'b1');
  const o1 = await sendStream(s, alice, 'flags-mark-other', 'x', 'o1');
  const events = await flagEvents(s, bob);

  const noTopic = await s.api('POST', '/mark_topic_as_read', bob, { stream_id: sid, topic_name: 'abc' });
  t.same([noTopic.status, noTopic.body.msg], [400, "No such topic 'abc'"]);
  t.same((await s.api('POST', '/mark_topic_as_read', bob, { stream_id: 12345678, topic_name: 'x' })).body.msg, 'Invalid channel ID');
  t.same((await s.api('POST', '/mark_stream_as_read', bob, { stream_id: 12345678 })).body.msg, 'Invalid channel ID');

  t.equal((await s.api('POST', '/mark_topic_as_read', bob, { stream_id: sid, topic_name: 'alpha' })).status, 200, 'the topic matches whatever its case');
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [a1], all: false }]);
  t.equal((await s.api('POST', '/mark_topic_as_read', bob, { stream_id: sid, topic_name: 'Alpha' })).status, 200);
  t.same(await events(), [], 'nothing unread there: no event');
  t.equal((await s.api('POST', '/mark_topic_as_read', bob, { stream_id: sid, topic_name: '' })).status, 200);
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [b1], all: false }], 'an empty topic name means the channel');

  await s.api('POST', '/mark_stream_as_read', bob, { stream_id: other });
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [o1], all: false }]);

  await sendDm(s, alice, [bob], 'dm');
  const all = await s.api('POST', '/mark_all_as_read', bob);
  t.same(all.body, { result: 'success', msg: '', complete: true });
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }]);
  await s.api('POST', '/mark_all_as_read', bob);
  t.same(await events(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }], 'even with nothing unread');
  t.equal((await unreadMsgs(s, bob)).count, 0);
  await verifyAction(t, s, bob, async () => {
    await sendStream(s, alice, 'flags-mark', 'beta', 'b2');
    await s.api('POST', '/mark_all_as_read', bob);
  }, { register: { event_types: ['message', 'update_message_flags'], fetch_event_types: ['message', 'update_message_flags'] } });
});

t.test('POST /messages/flags/narrow', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'flags-narrow', [bob]);
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) ids.push(await sendStream(s, alice, 'flags-narrow', `topic ${i % 2}`, `m${i}`));
  const call = (extra: Record<string, unknown>) => s.api('POST', '/messages/flags/narrow', bob, { narrow: '[]', op: 'add', flag: 'read', ...extra });

  const read = await call({ anchor: ids[5], num_before: 2, num_after: 2, narrow: [{ operator: 'channel', operand: 'flags-narrow' }] });
  t.same(read.body, {
    result: 'success', msg: '', processed_count: 5, updated_count: 5, first_processed_id: ids[3], last_processed_id: ids[7], found_oldest: false, found_newest: false,
  });
  const topic = [{ operator: 'stream', operand: 'flags-narrow' }, { operator: 'topic', operand: 'topic 1' }];
  const starred = await call({ anchor: ids[3], include_anchor: false, num_before: 0, num_after: 5, narrow: topic, flag: 'starred' });
  t.match(starred.body, { processed_count: 3, updated_count: 3, first_processed_id: ids[5], last_processed_id: ids[9], found_oldest: false, found_newest: true });
  const pairs = await call({ anchor: ids[3], include_anchor: false, num_before: 0, num_after: 5, narrow: [['stream', 'flags-narrow'], ['topic', 'topic 1']], flag: 'starred' });
  t.match(pairs.body, { processed_count: 3, updated_count: 0 }, 'already starred');

  const middle = await call({ anchor: ids[3], include_anchor: false, num_before: 1, num_after: 1 });
  t.same([middle.status, middle.body.msg], [400, 'The anchor can only be excluded at an end of the range']);
  const fetchMiddle = await s.api('GET', '/messages', bob, { anchor: ids[3], include_anchor: false, num_before: 1, num_after: 1 });
  t.same([fetchMiddle.status, fetchMiddle.body.msg], [400, 'The anchor can only be excluded at an end of the range'], 'GET /messages has the same rule');
  const badNarrow = await call({ anchor: ids[3], include_anchor: false, num_before: 1, num_after: 1, narrow: '[[],[]]' });
  t.match([badNarrow.status, badNarrow.body.msg], [400, /^Invalid narrow/], 'the narrow is checked before the window');
  const empty = await call({ anchor: 'newest', num_before: 0, num_after: 0, narrow: [{ operator: 'topic', operand: 'nothing here' }], op: 'bogus' });
  t.same(empty.body.msg, "Invalid message flag operation: 'bogus'", 'op and flag are checked even when nothing matches');
});

t.test('unread_msgs: sorting, count and mentions around muting', async (t) => {
  const s = await shared;
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const zed = await s.user(Role.MEMBER, 'Zed');
  const denmark = await createChannel(s, cordelia, 'flags-denmark', [hamlet]);
  const muted = await createChannel(s, cordelia, 'flags-muted', [hamlet]);
  const pmZed = await sendDm(s, zed, [hamlet], 'from zed');
  const pmCordelia = await sendDm(s, cordelia, [hamlet], 'from cordelia');
  // Mentioned by name, Hamlet would follow the topic (and it would no longer be muted): not what this case is about.
  await s.api('PATCH', '/settings', hamlet, { automatically_follow_topics_where_mentioned: false });
  await s.api('POST', '/users/me/subscriptions/properties', hamlet, { subscription_data: [{ stream_id: muted, property: 'is_muted', value: true }] });
  await s.api('POST', '/user_topics', hamlet, { stream_id: denmark, topic: 'muted-topic', visibility_policy: 1 });
  await s.api('POST', '/user_topics', hamlet, { stream_id: muted, topic: 'unmuted-topic', visibility_policy: 2 });
  const plain = await sendStream(s, cordelia, 'flags-denmark', 'test', 'hello');
  const personalInMuted = await sendStream(s, cordelia, 'flags-muted', 'test', 'hi @**Hamlet**');
  const wildcardInMutedTopic = await sendStream(s, cordelia, 'flags-denmark', 'muted-topic', 'hi @**all**');
  const wildcardInUnmutedTopic = await sendStream(s, cordelia, 'flags-muted', 'unmuted-topic', 'hi @**all**');
  const wildcardInMuted = await sendStream(s, cordelia, 'flags-muted', 'test', 'hi @**all**');
  const group2 = await sendDm(s, zed, [hamlet, othello], 'group two');
  const group1 = await sendDm(s, cordelia, [hamlet, othello], 'group one');
  const self = await sendDm(s, hamlet, [hamlet], 'note to self');
  await flags(s, hamlet, [self], 'remove', 'read');

  const unread = await unreadMsgs(s, hamlet);
  const byId = (...users: TestUser[]) => users.map((u) => u.id).sort((a, b) => a - b).join(',');
  t.same(unread.pms, [cordelia, hamlet, zed].sort((a, b) => a.id - b.id).map((u) => ({
    other_user_id: u.id, sender_id: u.id, unread_message_ids: [u === zed ? pmZed : u === cordelia ? pmCordelia : self],
  })), 'direct messages by the other user');
  t.same(unread.streams, [
    { stream_id: denmark, topic: 'muted-topic', unread_message_ids: [wildcardInMutedTopic] },
    { stream_id: denmark, topic: 'test', unread_message_ids: [plain] },
    { stream_id: muted, topic: 'test', unread_message_ids: [personalInMuted, wildcardInMuted] },
    { stream_id: muted, topic: 'unmuted-topic', unread_message_ids: [wildcardInUnmutedTopic] },
  ], 'channels by id, then topic');
  t.same(unread.huddles, [
    { user_ids_string: byId(cordelia, hamlet, othello), unread_message_ids: [group1] },
    { user_ids_string: byId(zed, hamlet, othello), unread_message_ids: [group2] },
  ].sort((a, b) => (a.user_ids_string < b.user_ids_string ? -1 : 1)), 'groups by their id list');
  t.same(unread.mentions, [personalInMuted, wildcardInUnmutedTopic], 'a personal mention counts even when muted; a wildcard only outside muted conversations');
  t.equal(unread.count, 3 + 2 + 2, 'muted conversations are left out of the count');
  t.equal(unread.old_unreads_missing, false);

  const events = await flagEvents(s, hamlet);
  await flags(s, hamlet, [personalInMuted, wildcardInMutedTopic, wildcardInUnmutedTopic, group1], 'add', 'read');
  await events();
  await flags(s, hamlet, [personalInMuted, wildcardInMutedTopic, wildcardInUnmutedTopic, group1], 'remove', 'read');
  const [event] = await events();
  t.same(event!.message_details, {
    [personalInMuted]: { type: 'stream', stream_id: muted, topic: 'test', unmuted_stream_msg: false, mentioned: true },
    [wildcardInMutedTopic]: { type: 'stream', stream_id: denmark, topic: 'muted-topic', unmuted_stream_msg: false },
    [wildcardInUnmutedTopic]: { type: 'stream', stream_id: muted, topic: 'unmuted-topic', unmuted_stream_msg: true, mentioned: true },
    [group1]: { type: 'private', user_ids: [cordelia.id, othello.id].sort((a, b) => a - b) },
  });
});
