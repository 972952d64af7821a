import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { setRealmProperties } from '../helpers/realm.js';
import { createChannel, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

const register = {
  event_types: ['message', 'update_message', 'delete_message', 'update_message_flags'],
  fetch_event_types: ['message', 'update_message_flags', 'starred_messages'],
  client_capabilities: { bulk_message_deletion: true },
  apply_markdown: true,
};
const newest = (narrow: unknown[] = []) => ({ anchor: 'newest', num_before: 100, num_after: 0, narrow });

// One server per file (each start costs seconds); every test uses its own users and channels.
const shared = startTestServer(t);

const flagsOf = async (s: TestServer, u: TestUser, id: number) => {
  const r = await s.api('GET', `/messages/${id}`, u);
  return r.status === 200 ? [...(r.body.message.flags as string[])].sort() : null;
};
const poll = async (s: TestServer, u: TestUser, reg: { body: any }) =>
  (await s.api('GET', '/events', u, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true })).body.events
    .filter((e: { type: string }) => e.type !== 'heartbeat') as Array<Record<string, any>>;

t.test('moving to another channel: reception follows the new channel\'s subscribers', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const both = await s.user(Role.MEMBER, 'Both'); // in A and B all along
  const lateB = await s.user(Role.MEMBER, 'LateB'); // in A, joins B after the message
  const onlyA = await s.user(Role.MEMBER, 'OnlyA'); // in A only
  const onlyB = await s.user(Role.MEMBER, 'OnlyB'); // in B only
  const leftB = await s.user(Role.MEMBER, 'LeftB'); // in B when it was sent, gone before the move
  await createChannel(s, alice, 'move-a', [both, lateB, onlyA]);
  const b = await createChannel(s, alice, 'move-b', [both, onlyB, leftB]);
  const m = await sendStream(s, alice, 'move-a', 'story', 'hello @**all**');
  await subscribe(s, alice, 'move-b', [lateB]);
  await unsubscribe(s, leftB, 'move-b', [leftB]);
  await s.api('POST', '/messages/flags', both, { messages: [m], op: 'add', flag: 'starred' });
  await s.api('POST', '/messages/flags', onlyA, { messages: [m], op: 'add', flag: 'starred' });

  const moved = await s.api('PATCH', `/messages/${m}`, alice, { stream_id: b, propagate_mode: 'change_one' });
  t.equal(moved.status, 200, JSON.stringify(moved.body));

  t.same(await flagsOf(s, both, m), ['starred', 'stream_wildcard_mentioned', 'wildcard_mentioned'], 'kept: unread, starred, mentioned');
  t.same(await flagsOf(s, lateB, m), ['stream_wildcard_mentioned', 'wildcard_mentioned'], 'joined the new channel later: still received and unread');
  t.same(await flagsOf(s, onlyB, m), ['read', 'stream_wildcard_mentioned', 'wildcard_mentioned'], 'gained: received, as read');
  t.same(await flagsOf(s, onlyA, m), ['historical', 'read'], 'not in the new channel: no longer received, flags gone (public: still readable)');
  t.same(await flagsOf(s, leftB, m), ['historical', 'read'], 'a former subscriber of the new channel does not receive it');

  const unread = await s.api('GET', '/messages', lateB, newest([{ operator: 'is', operand: 'unread' }]));
  t.same(unread.body.messages.map((x: { id: number }) => x.id), [m], 'is:unread follows the move');
  const mentions = await s.api('GET', '/messages', onlyB, newest([{ operator: 'is', operand: 'mentioned' }]));
  t.same(mentions.body.messages.map((x: { id: number }) => x.id), [m], 'gained messages count as received in history narrows');
  const history = await s.api('GET', '/messages', onlyA, newest());
  t.notOk(history.body.messages.some((x: { id: number }) => x.id === m), 'no longer in the loser\'s own history');
  const reg = await s.api('POST', '/register', lateB, { fetch_event_types: ['message', 'update_message_flags'] });
  t.same(reg.body.unread_msgs.streams, [{ stream_id: b, topic: 'story', unread_message_ids: [m] }]);
});

t.test('move events keep registered state equal to a fresh register', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const both = await s.user(Role.MEMBER, 'Both');
  const lateB = await s.user(Role.MEMBER, 'LateB');
  const onlyB = await s.user(Role.MEMBER, 'OnlyB');
  const onlyA = await s.user(Role.MEMBER, 'OnlyA');
  const a = await createChannel(s, alice, 'ev-a', [both, lateB, onlyA]);
  const b = await createChannel(s, alice, 'ev-b', [both, onlyB]);
  const secret = await createChannel(s, alice, 'ev-secret', [both], { invite_only: true, history_public_to_subscribers: false });

  const m1 = await sendStream(s, alice, 'ev-a', 'one', 'first');
  const m2 = await sendStream(s, alice, 'ev-a', 'one', 'second');
  await subscribe(s, alice, 'ev-b', [lateB]);
  let events = await verifyAction(t, s, lateB, () => s.api('PATCH', `/messages/${m1}`, alice, { stream_id: b, propagate_mode: 'change_all' }), { register: register, ignoreKeys: ['max_message_id'] });
  t.match(events, [{ type: 'update_message', message_ids: [m1, m2], stream_id: a, new_stream_id: b, orig_subject: 'one', propagate_mode: 'change_all' }],
    'a user keeping the messages gets update_message');

  const m3 = await sendStream(s, alice, 'ev-a', 'two', 'third');
  events = await verifyAction(t, s, onlyB, () => s.api('PATCH', `/messages/${m3}`, alice, { stream_id: b, propagate_mode: 'change_one' }), { register, ignoreKeys: ['max_message_id'] });
  t.match(events, [{ type: 'update_message', message_ids: [m3], new_stream_id: b }], 'a subscriber of the new channel gains the message and an update_message');
  t.ok(events[0]!.flags.includes('read'));

  const m4 = await sendStream(s, alice, 'ev-a', 'three', 'secret move');
  const onlyAReg = await s.api('POST', '/register', onlyA, register);
  events = await verifyAction(t, s, both, () => s.api('PATCH', `/messages/${m4}`, alice, { stream_id: secret, propagate_mode: 'change_one' }), { register, ignoreKeys: ['max_message_id'] });
  t.match(events, [{ type: 'update_message', message_ids: [m4], new_stream_id: secret }]);
  const lost = await poll(s, onlyA, onlyAReg);
  t.same(lost, [{ type: 'delete_message', message_type: 'stream', message_ids: [m4], stream_id: a, topic: 'three', id: lost[0]?.id }],
    'moving into a private channel: delete_message, and nothing that shows the content');

  const m5 = await sendStream(s, alice, 'ev-a', 'four', 'another secret move');
  await verifyAction(t, s, onlyA, () => s.api('PATCH', `/messages/${m5}`, alice, { stream_id: secret, propagate_mode: 'change_one' }), {
    register,
    ignoreKeys: ['max_message_id'],
    expect: (evs) => t.same(evs.map((e) => e.type), ['delete_message']),
  });
});

t.test('a user losing access never sees the moved content', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const guest = await s.user(Role.GUEST, 'Guest');
  const insider = await s.user(Role.MEMBER, 'Insider');
  await createChannel(s, alice, 'vis-a', [eve, guest]);
  const secret = await createChannel(s, alice, 'vis-secret', [insider], { invite_only: true, history_public_to_subscribers: false });
  const pub = await createChannel(s, alice, 'vis-public', []);
  const m = await sendStream(s, alice, 'vis-a', 'plans', 'the zanzibar plan');
  const g = await sendStream(s, alice, 'vis-a', 'plans', 'for guests only zanzibar');
  const eveReg = await s.api('POST', '/register', eve, { event_types: ['message', 'update_message', 'delete_message'], client_capabilities: { bulk_message_deletion: true } });
  const guestReg = await s.api('POST', '/register', guest, { event_types: ['message', 'update_message', 'delete_message'], client_capabilities: { bulk_message_deletion: true } });

  t.equal((await s.api('PATCH', `/messages/${m}`, alice, { stream_id: secret, propagate_mode: 'change_one' })).status, 200);
  t.equal((await s.api('PATCH', `/messages/${g}`, alice, { stream_id: pub, propagate_mode: 'change_one' })).status, 200);
  await s.api('PATCH', `/messages/${m}`, alice, { content: 'the edited zanzibar plan' });

  for (const [who, id] of [[eve, m], [guest, m], [guest, g]] as Array<[TestUser, number]>) {
    t.equal((await s.api('GET', `/messages/${id}`, who)).status, 400, 'GET /messages/{id} refuses');
    for (const narrow of [[], [{ operator: 'search', operand: 'zanzibar' }], [{ operator: 'is', operand: 'unread' }], [{ operator: 'id', operand: id }]]) {
      const r = await s.api('GET', '/messages', who, newest(narrow));
      t.notOk((r.body.messages ?? []).some((x: { id: number }) => x.id === id), `not in ${JSON.stringify(narrow)}`);
    }
  }
  const inSecret = await s.api('GET', '/messages', eve, newest([{ operator: 'channel', operand: secret }]));
  t.notOk((inSecret.body.messages ?? []).some((x: { id: number }) => x.id === m), 'not in a narrow to the private channel');
  t.equal((await s.api('GET', `/messages/${g}`, eve)).status, 200, 'a member still reads a message moved to a public channel');
  t.equal((await s.api('GET', `/messages/${m}`, insider)).status, 200, 'the new channel\'s subscriber reads it');
  t.ok((await flagsOf(s, insider, m))!.includes('read'));

  const eveEvents = await poll(s, eve, eveReg);
  t.same(eveEvents.map((e) => e.type), ['delete_message', 'update_message'], 'eve: deleted, then the public move');
  t.notOk(JSON.stringify(eveEvents).includes('the edited zanzibar plan'), 'no content of the private move reaches eve');
  const guestEvents = await poll(s, guest, guestReg);
  t.same(guestEvents.map((e) => [e.type, e.message_ids]), [['delete_message', [m]], ['delete_message', [g]]], 'a guest loses both');
});

t.test('move time limits', async (t) => {
  const s = await shared;
  const member = await s.user(Role.MEMBER, 'Member');
  const moderator = await s.user(Role.MODERATOR, 'Moderator');
  await createChannel(s, member, 'lim-a', [moderator]);
  const b = await createChannel(s, member, 'lim-b', [moderator]);
  const fresh = await sendStream(s, member, 'lim-a', 'old', 'fresh');
  const template = (await s.api('GET', `/messages/${fresh}`, member)).body.message;
  // A message sent an hour ago, written to the log as the send would have written it.
  const sendOld = async (topic: string): Promise<number> => {
    const id = await s.platform.commands.nextId('message_id_seq');
    const data = {
      message_id: id, realm_id: 1, sender_id: member.id, stream_id: template.stream_id, topic, recipient_id: template.recipient_id,
      recipient_key: `stream:${template.stream_id}`, dm_user_ids: [], content: 'old', rendered_content: '<p>old</p>', client: 'test',
      date_sent: Math.floor(Date.now() / 1000) - 3600, is_me_message: false, has_link: false, has_image: false, has_attachment: false,
      mentioned_user_ids: [], stream_wildcard: false, topic_wildcard: false, topic_wildcard_user_ids: [], alerted_user_ids: [],
      read_by_sender: true, attachment_paths: [], sender_queue_id: null, local_id: null,
    };
    const metadata = { actor_id: member.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
    await s.platform.commands.run(metadata, async () => ({
      appends: [{ streamId: `message-${id}`, expectedVersion: -1, events: [{ type: 'MessageSent', data }] }],
      result: undefined,
    }));
    return id;
  };
  const old = await sendOld('old');
  const recent = await sendStream(s, member, 'lim-a', 'old', 'recent');
  await setRealmProperties(s, { move_messages_within_stream_limit_seconds: 600, move_messages_between_streams_limit_seconds: 1200 });

  let r = await s.api('PATCH', `/messages/${old}`, member, { topic: 'new', propagate_mode: 'change_one' });
  t.same([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', "The time limit for editing this message's topic has passed."]);
  r = await s.api('PATCH', `/messages/${old}`, member, { stream_id: b, propagate_mode: 'change_one' });
  t.same([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', "The time limit for editing this message's channel has passed"]);
  r = await s.api('PATCH', `/messages/${recent}`, member, { topic: 'new', propagate_mode: 'change_all' });
  t.equal(r.status, 400);
  t.same(r.body, {
    result: 'error', code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', msg: 'You only have permission to move the 2/3 most recent messages in this topic.',
    first_message_id_allowed_to_move: fresh, total_messages_allowed_to_move: 2, total_messages_in_topic: 3,
  });
  r = await s.api('PATCH', `/messages/${recent}`, member, { topic: 'new', propagate_mode: 'change_later' });
  t.equal(r.status, 200, 'a part within the limit moves with change_later');
  t.same((await s.api('GET', `/messages/${old}`, member)).body.message.subject, 'old');
  r = await s.api('PATCH', `/messages/${old}`, moderator, { stream_id: b, topic: 'new', propagate_mode: 'change_all' });
  t.equal(r.status, 200, `moderators are not limited: ${JSON.stringify(r.body)}`);
  await setRealmProperties(s, { move_messages_within_stream_limit_seconds: null });
  r = await s.api('PATCH', `/messages/${old}`, member, { topic: 'newer', propagate_mode: 'change_one' });
  t.equal(r.status, 200, 'null: no limit');
});

t.test('topic wildcard mentions flag only topic participants', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const talker = await s.user(Role.MEMBER, 'Talker');
  const reactor = await s.user(Role.MEMBER, 'Reactor');
  const lurker = await s.user(Role.MEMBER, 'Lurker');
  await createChannel(s, alice, 'tw', [talker, reactor, lurker]);
  const first = await sendStream(s, talker, 'tw', 'plans', 'I am here');
  await s.api('POST', `/messages/${first}/reactions`, reactor, { emoji_name: 'smile' });
  await sendStream(s, lurker, 'tw', 'elsewhere', 'other topic');

  let m = 0;
  const lurkerEvents = await verifyAction(t, s, lurker, async () => { m = await sendStream(s, alice, 'tw', 'plans', 'hey @**topic**'); }, { register });
  t.same(lurkerEvents[0]!.flags, [], 'a subscriber who never took part is not flagged');
  const talkerEvents = await verifyAction(t, s, talker, () => sendStream(s, alice, 'tw', 'plans', 'again @**topic**'), { register });
  t.same([...talkerEvents[0]!.flags].sort(), ['topic_wildcard_mentioned', 'wildcard_mentioned'], 'a sender in the topic is');

  t.same(await flagsOf(s, reactor, m), ['topic_wildcard_mentioned', 'wildcard_mentioned'], 'a reactor in the topic is');
  t.same(await flagsOf(s, talker, m), ['topic_wildcard_mentioned', 'wildcard_mentioned']);
  t.same(await flagsOf(s, lurker, m), []);
  t.same(await flagsOf(s, alice, m), ['read', 'topic_wildcard_mentioned', 'wildcard_mentioned'], 'the sender takes part');

  const mentioned = async (u: TestUser) => (await s.api('GET', '/messages', u, newest([{ operator: 'is', operand: 'mentioned' }]))).body.messages.map((x: { id: number }) => x.id);
  t.ok((await mentioned(talker)).includes(m), 'is:mentioned for a participant');
  t.notOk((await mentioned(lurker)).includes(m), 'not for the others');
  const unreadMentions = async (u: TestUser) => (await s.api('POST', '/register', u, { fetch_event_types: ['message', 'update_message_flags'] })).body.unread_msgs.mentions;
  t.ok((await unreadMentions(talker)).includes(m));
  t.notOk((await unreadMentions(lurker)).includes(m));

  // An edit that adds the mention flags the participants at that time.
  const plain = await sendStream(s, alice, 'tw', 'plans', 'no mention yet');
  // Read first: update_message carries flags, but unread mention counts are the client's business.
  await s.api('POST', '/messages/flags', reactor, { messages: [plain], op: 'add', flag: 'read' });
  const edited = await verifyAction(t, s, reactor, () => s.api('PATCH', `/messages/${plain}`, alice, { content: 'now @**topic**' }), { register });
  t.ok(edited[0]!.flags.includes('topic_wildcard_mentioned'));
  t.same(await flagsOf(s, lurker, plain), []);
  t.same(await flagsOf(s, reactor, plain), ['read', 'topic_wildcard_mentioned', 'wildcard_mentioned']);
  await s.api('PATCH', `/messages/${plain}`, alice, { content: 'mention removed' });
  t.same(await flagsOf(s, reactor, plain), ['read'], 'removing the mention clears it');
});
