import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';
import { move, moveQueueRegister, poll, queueOf } from '../helpers/moves-fixture.js';

// Who hears about messages moved between channels: a message moved twice, topic lists of
// channels with protected history, and guests (zerver/actions/message_edit.py, do_update_message).

const topicsOf = async (s: TestServer, u: TestUser, streamId: number) => {
  const r = await s.api('GET', `/users/me/${streamId}/topics`, u);
  if (r.status !== 200) throw new Error(`topics: ${JSON.stringify(r.body)}`);
  return (r.body.topics as Array<{ name: string }>).map((x) => x.name);
};

const shared = startTestServer(t);

t.test('a message moved twice: the second move\'s audience is who had it after the first', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const lateB = await s.user(Role.MEMBER, 'LateB'); // joins B after the message: receives it through the first move
  const lateGuest = await s.user(Role.GUEST, 'LateGuest'); // the same, a guest
  const formerB = await s.user(Role.MEMBER, 'FormerB'); // in B when it was sent, gone before the first move: never received it
  const stay = await s.user(Role.MEMBER, 'Stay'); // in B and in both destinations
  await createChannel(s, alice, 'twice-a', []);
  const b = await createChannel(s, alice, 'twice-b', [formerB, stay]);
  const pub = await createChannel(s, alice, 'twice-c', [stay]);
  const secret = await createChannel(s, alice, 'twice-secret', [stay], { invite_only: true, history_public_to_subscribers: false });
  const m1 = await sendStream(s, alice, 'twice-a', 'first', 'one');
  const m2 = await sendStream(s, alice, 'twice-a', 'second', 'two');
  await subscribe(s, alice, 'twice-b', [lateB, lateGuest]);
  await unsubscribe(s, formerB, 'twice-b', [formerB]);
  await move(s, alice, m1, b);
  await move(s, alice, m2, b);
  t.equal((await s.api('GET', `/messages/${m1}`, lateB)).body.message.flags.includes('historical'), false, 'lateB received it through the move');
  t.same([...(await s.api('GET', `/messages/${m1}`, formerB)).body.message.flags].sort(), ['historical', 'read'], 'formerB did not');

  const queues = new Map<TestUser, { body: any }>();
  for (const u of [lateB, lateGuest, formerB, stay]) queues.set(u, await queueOf(s, u));
  await move(s, alice, m1, pub);
  await move(s, alice, m2, secret);

  const lateEvents = await poll(s, lateB, queues.get(lateB)!);
  t.match(lateEvents, [
    { type: 'update_message', message_ids: [m1], stream_id: b, new_stream_id: pub },
    { type: 'delete_message', message_ids: [m2], stream_id: b, topic: 'second' },
  ], 'who received it through the first move hears of the second');
  t.equal(lateEvents.length, 2);
  t.same([...(lateEvents[0]?.flags ?? [])].sort(), ['historical', 'read'], 'no longer received, still readable (public)');
  const guestEvents = await poll(s, lateGuest, queues.get(lateGuest)!);
  t.same(guestEvents.map((e) => [e.type, e.message_ids]), [['delete_message', [m1]], ['delete_message', [m2]]], 'a guest losing both: deleted');
  t.same(await poll(s, formerB, queues.get(formerB)!), [], 'who never had it hears nothing (no ids, no topic name)');
  const stayEvents = await poll(s, stay, queues.get(stay)!);
  t.same(stayEvents.map((e) => [e.type, e.message_ids]), [['update_message', [m1]], ['update_message', [m2]]]);
  for (const [who, id] of [[lateGuest, m1], [lateB, m2], [formerB, m2], [lateGuest, m2]] as Array<[TestUser, number]>) {
    t.equal((await s.api('GET', `/messages/${id}`, who)).status, 400, 'deleted for them: not readable either');
  }
});

t.test('moved twice: registered state stays equal to a fresh register', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const lateB = await s.user(Role.MEMBER, 'LateB');
  const formerB = await s.user(Role.MEMBER, 'FormerB');
  await createChannel(s, alice, 'twice-v-a', []);
  const b = await createChannel(s, alice, 'twice-v-b', [formerB]);
  const c = await createChannel(s, alice, 'twice-v-c', [lateB]);
  const m = await sendStream(s, alice, 'twice-v-a', 'topic', 'hello');
  await subscribe(s, alice, 'twice-v-b', [lateB]);
  await unsubscribe(s, formerB, 'twice-v-b', [formerB]);
  await move(s, alice, m, b);
  await s.api('POST', '/messages/flags', lateB, { messages: [m], op: 'remove', flag: 'read' });
  const events = await verifyAction(t, s, lateB, () => move(s, alice, m, c), { register: moveQueueRegister, ignoreKeys: ['max_message_id'] });
  t.match(events, [{ type: 'update_message', message_ids: [m], stream_id: b, new_stream_id: c }], 'kept (unread) in the new channel');
});

t.test('topics of a channel with protected history follow moved receptions', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const late = await s.user(Role.MEMBER, 'Late'); // joins after the message was sent: receives it through the move
  const former = await s.user(Role.MEMBER, 'Former'); // subscribed when it was sent, away during the move, back again
  await createChannel(s, alice, 'topics-a', []);
  const p = await createChannel(s, alice, 'topics-p', [former], { invite_only: true, history_public_to_subscribers: false });
  const before = await sendStream(s, alice, 'topics-p', 'already', 'before');
  const m = await sendStream(s, alice, 'topics-a', 'moved in', 'hello');
  await subscribe(s, alice, 'topics-p', [late]);
  await unsubscribe(s, former, 'topics-p', [former]);
  await move(s, alice, m, p);
  await subscribe(s, alice, 'topics-p', [former]);

  t.same(await topicsOf(s, late, p), ['moved in'], 'received through the move: the topic is listed, not the one from before');
  t.same(await topicsOf(s, former, p), ['already'], 'not received through the move: the topic is not listed');
  t.same(await topicsOf(s, alice, p), ['moved in', 'already']);
  const narrow = (u: TestUser) => s.api('GET', '/messages', u, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: p }] });
  t.same((await narrow(late)).body.messages.map((x: { id: number }) => x.id), [m], 'the same answer as the channel narrow');
  t.same((await narrow(former)).body.messages.map((x: { id: number }) => x.id), [before]);
});

t.test('guests new to the destination channel', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const inA = await s.user(Role.GUEST, 'GuestInA'); // in the old channel only
  const inBoth = await s.user(Role.GUEST, 'GuestInBoth'); // had the messages, and is in the destination
  const toPublic = await s.user(Role.GUEST, 'GuestPublic'); // in a public destination only
  const toShared = await s.user(Role.GUEST, 'GuestShared'); // in a private destination with shared history only
  const toProtected = await s.user(Role.GUEST, 'GuestProtected'); // in a private destination with protected history only
  const member = await s.user(Role.MEMBER, 'Member'); // a member new to the public destination
  const joinedA = await s.user(Role.GUEST, 'GuestJoinedA'); // in the destination, joins the old channel after the messages
  await createChannel(s, alice, 'guests-a', [inA, inBoth]);
  const pub = await createChannel(s, alice, 'guests-public', [inBoth, toPublic, member, joinedA]);
  const sharedHistory = await createChannel(s, alice, 'guests-shared', [toShared], { invite_only: true, history_public_to_subscribers: true });
  const prot = await createChannel(s, alice, 'guests-protected', [toProtected], { invite_only: true, history_public_to_subscribers: false });
  const m1 = await sendStream(s, alice, 'guests-a', 'one', 'to the public channel');
  const m2 = await sendStream(s, alice, 'guests-a', 'two', 'to the private channel with shared history');
  const m3 = await sendStream(s, alice, 'guests-a', 'three', 'to the private channel with protected history');
  await subscribe(s, alice, 'guests-a', [joinedA]);

  const queues = new Map<TestUser, { body: any }>();
  for (const u of [inA, inBoth, toPublic, toShared, toProtected, member, joinedA]) queues.set(u, await queueOf(s, u));
  const events = await verifyAction(t, s, toPublic, async () => {
    await move(s, alice, m1, pub);
    await move(s, alice, m2, sharedHistory);
    await move(s, alice, m3, prot);
  }, { register: moveQueueRegister, ignoreKeys: ['max_message_id'] });
  t.same(events, [], 'a guest new to a public destination gets no update_message (the real server leaves them out)');
  t.same(await poll(s, toShared, queues.get(toShared)!), [], 'nor one new to a private destination with shared history');
  t.match(await poll(s, toProtected, queues.get(toProtected)!), [{ type: 'update_message', message_ids: [m3], new_stream_id: prot, flags: ['read'] }],
    'one new to a destination with protected history gains the message, and hears of it');
  t.match(await poll(s, inBoth, queues.get(inBoth)!), [{ type: 'update_message', message_ids: [m1], new_stream_id: pub }], 'a guest who had it and keeps it');
  t.same((await poll(s, inA, queues.get(inA)!)).map((e) => [e.type, e.message_ids]), [['delete_message', [m1]], ['delete_message', [m2]], ['delete_message', [m3]]],
    'a guest not in the destination: deleted, wherever it went');
  t.match(await poll(s, member, queues.get(member)!), [{ type: 'update_message', message_ids: [m1], new_stream_id: pub, flags: ['read'] }],
    'a member new to the destination still hears of it');
  t.same((await poll(s, joinedA, queues.get(joinedA)!)).map((e) => [e.type, e.message_ids, e.new_stream_id]), [['update_message', [m1], pub]],
    'a guest subscribed to the old channel (shared history) hears of it, as on the real server, though it never had it');
  t.equal((await s.api('GET', `/messages/${m1}`, toPublic)).status, 200, 'the guest can read it where it is now');
});
