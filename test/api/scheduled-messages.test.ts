import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

// One server per file; every test uses its own users and channels.
const shared = startTestServer(t);
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function schedule(s: TestServer, as: TestUser, params: Record<string, unknown>): Promise<number> {
  const r = await s.api('POST', '/scheduled_messages', as, { scheduled_delivery_timestamp: nowSeconds() + 3600, ...params });
  if (r.status !== 200) throw new Error(`schedule: ${JSON.stringify(r.body)}`);
  return r.body.scheduled_message_id as number;
}

const list = async (s: TestServer, as: TestUser) => (await s.api('GET', '/scheduled_messages', as)).body.scheduled_messages as any[];
const newest = async (s: TestServer, as: TestUser, narrow: unknown[]) =>
  (await s.api('GET', '/messages', as, { anchor: 'newest', num_before: 10, num_after: 0, narrow })).body.messages as any[];

t.test('create and list: shapes, order, direct and channel messages', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const sid = await createChannel(s, alice, 'sched-list', [bob]);
  const base = nowSeconds();
  const later = await schedule(s, alice, { type: 'stream', to: sid, topic: '  plans  ', content: 'hello **all**', scheduled_delivery_timestamp: base + 7200 });
  const sooner = await schedule(s, alice, { type: 'direct', to: [bob.id, carol.id], content: 'group dm', scheduled_delivery_timestamp: base + 600 });
  const toSelf = await schedule(s, alice, { type: 'private', to: [alice.id], content: 'note', scheduled_delivery_timestamp: base + 900 });
  t.not(later, sooner);

  const got = await s.api('GET', '/scheduled_messages', alice);
  t.equal(got.status, 200);
  t.same(got.body.scheduled_messages, [
    { scheduled_message_id: sooner, type: 'private', to: [bob.id, carol.id], content: 'group dm', rendered_content: '<p>group dm</p>', scheduled_delivery_timestamp: base + 600, failed: false },
    { scheduled_message_id: toSelf, type: 'private', to: [alice.id], content: 'note', rendered_content: '<p>note</p>', scheduled_delivery_timestamp: base + 900, failed: false },
    { scheduled_message_id: later, type: 'stream', to: sid, topic: 'plans', content: 'hello **all**', rendered_content: '<p>hello <strong>all</strong></p>', scheduled_delivery_timestamp: base + 7200, failed: false },
  ], 'soonest first; DMs list the other participants, channel messages the channel id and topic');
  t.same(await list(s, bob), [], 'nobody sees another user\'s scheduled messages');
});

t.test('create: every rule of sending applies, and the time must be in the future', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'sched-rules', [bob]);
  const secret = await createChannel(s, bob, 'sched-secret', [], { invite_only: true });
  const post = (params: Record<string, unknown>) => s.api('POST', '/scheduled_messages', alice, { scheduled_delivery_timestamp: nowSeconds() + 3600, ...params });
  const expectError = async (params: Record<string, unknown>, msg: string | RegExp, code = 'BAD_REQUEST', status = 400) => {
    const r = await post(params);
    t.equal(r.status, status, `${JSON.stringify(params)} → ${status}`);
    t.match(r.body, { result: 'error', code, msg }, JSON.stringify(r.body));
  };
  await expectError({ type: 'stream', to: sid, topic: 'x', content: 'past', scheduled_delivery_timestamp: nowSeconds() - 10 }, 'Scheduled delivery time must be in the future.');
  await expectError({ type: 'stream', to: sid, topic: 'x', content: 'now', scheduled_delivery_timestamp: nowSeconds() }, 'Scheduled delivery time must be in the future.');
  await expectError({ type: 'stream', to: sid, topic: 'x', content: 'far', scheduled_delivery_timestamp: 253_402_300_800 }, 'Invalid scheduled_delivery_timestamp');
  await expectError({ type: 'stream', to: 999_999, topic: 'x', content: 'c' }, "Channel with ID '999999' does not exist", 'STREAM_DOES_NOT_EXIST');
  await expectError({ type: 'stream', to: secret, topic: 'x', content: 'c' }, `Channel with ID '${secret}' does not exist`, 'STREAM_DOES_NOT_EXIST');
  await expectError({ type: 'stream', to: 'sched-rules', topic: 'x', content: 'c' }, 'Invalid data type for channel ID');
  await expectError({ type: 'stream', to: sid, content: 'no topic' }, 'Missing topic');
  await expectError({ type: 'stream', to: sid, topic: 'x', content: '   ' }, 'Message must not be empty');
  await expectError({ type: 'direct', to: [bob.id, 987_654], content: 'c' }, 'Invalid user ID 987654');
  await expectError({ type: 'direct', to: bob.id, content: 'c' }, 'Invalid data type for recipients');
  await expectError({ type: 'direct', to: JSON.stringify([bob.email]), content: 'c' }, 'Recipient list may only contain user IDs');
  await expectError({ type: 'direct', to: [], content: 'c' }, 'Message must have recipients');
  await expectError({ type: 'carrier-pigeon', to: [bob.id], content: 'c' }, /type/);
  await expectError({ type: 'direct', to: [bob.id] }, /content/, 'REQUEST_VARIABLE_MISSING');
  await expectError({ type: 'direct', to: [bob.id], content: 'c', scheduled_delivery_timestamp: 'soon' }, /scheduled_delivery_timestamp/);
  t.same(await list(s, alice), [], 'nothing was scheduled by the refused requests');

  // Sending rules carry over: topic truncation, mandatory topics, stream_post_policy.
  const long = await schedule(s, alice, { type: 'channel', to: sid, topic: 'x'.repeat(80), content: 'c' });
  t.equal((await list(s, alice)).find((m) => m.scheduled_message_id === long).topic, `${'x'.repeat(57)}...`);
  const unauth = await s.api('POST', '/scheduled_messages', null, { type: 'direct', to: [bob.id], content: 'c', scheduled_delivery_timestamp: nowSeconds() + 60 });
  t.equal(unauth.status, 401);
});

t.test('edit: rules, errors, and what changes', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'sched-edit', [bob]);
  const id = await schedule(s, alice, { type: 'direct', to: [bob.id], content: 'first' });
  const patch = (params: Record<string, unknown>, as = alice, target = id) => s.api('PATCH', `/scheduled_messages/${target}`, as, params);
  const expectError = async (r: Awaited<ReturnType<typeof patch>>, msg: string, status = 400) => {
    t.equal(r.status, status, JSON.stringify(r.body));
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
  };
  await expectError(await patch({}), 'Nothing to change');
  await expectError(await patch({ type: 'stream' }), 'Recipient required when updating type of scheduled message.');
  await expectError(await patch({ type: 'stream', to: sid }), 'Topic required when updating scheduled message type to channel.');
  await expectError(await patch({ scheduled_delivery_timestamp: nowSeconds() - 1 }), 'Scheduled delivery time must be in the future.');
  await expectError(await patch({ content: 'stolen' }, bob), 'Scheduled message does not exist', 404);
  await expectError(await patch({ content: 'x' }, alice, 99_999_999), 'Scheduled message does not exist', 404);
  await expectError(await patch({ to: [424_242] }), 'Invalid user ID 424242');

  t.equal((await patch({ content: 'second *edit*' })).status, 200);
  t.match((await list(s, alice))[0], { scheduled_message_id: id, type: 'private', to: [bob.id], content: 'second *edit*', rendered_content: '<p>second <em>edit</em></p>' });
  t.equal((await patch({ topic: 'ignored for a DM' })).status, 200, 'a topic for a direct message is ignored');
  t.notOk('topic' in (await list(s, alice))[0]);

  t.equal((await patch({ type: 'stream', to: sid, topic: 'moved' })).status, 200);
  t.match((await list(s, alice))[0], { type: 'stream', to: sid, topic: 'moved', content: 'second *edit*' });
  t.equal((await patch({ topic: 'renamed' })).status, 200);
  t.match((await list(s, alice))[0], { type: 'stream', to: sid, topic: 'renamed' });
  const when = nowSeconds() + 5000;
  t.equal((await patch({ scheduled_delivery_timestamp: when })).status, 200);
  t.equal((await list(s, alice))[0].scheduled_delivery_timestamp, when);
  t.equal((await patch({ type: 'direct', to: [alice.id] })).status, 200);
  t.match((await list(s, alice))[0], { type: 'private', to: [alice.id] });
});

t.test('delete: own only, then gone', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const id = await schedule(s, alice, { type: 'direct', to: [bob.id], content: 'to delete' });
  const byBob = await s.api('DELETE', `/scheduled_messages/${id}`, bob);
  t.equal(byBob.status, 404);
  t.match(byBob.body, { code: 'BAD_REQUEST', msg: 'Scheduled message does not exist' });
  t.equal((await s.api('DELETE', `/scheduled_messages/${id}`, alice)).status, 200);
  t.same(await list(s, alice), []);
  t.equal((await s.api('DELETE', `/scheduled_messages/${id}`, alice)).status, 404, 'twice: gone');
  t.equal((await s.api('DELETE', '/scheduled_messages/abc', alice)).status, 404, 'an integer in the path takes digits only: no route');
  t.equal((await s.api('DELETE', '/scheduled_messages/99999999999999999999', alice)).status, 404);
});

t.test('delivery: sent once at its time, as its sender, then off the list', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'sched-deliver', [bob]);
  const at = nowSeconds() + 60;
  const id = await schedule(s, alice, { type: 'stream', to: sid, topic: 'later', content: `hi @**Bob|${bob.id}**`, scheduled_delivery_timestamp: at });
  const dm = await schedule(s, alice, { type: 'direct', to: [bob.id], content: 'dm later', scheduled_delivery_timestamp: at });
  const note = await schedule(s, alice, { type: 'direct', to: [alice.id], content: 'note to self', scheduled_delivery_timestamp: at });

  t.same(await s.scheduler.runOnce(new Date((at - 1) * 1000)), { delivered: 0, failed: 0 }, 'not before its time');
  t.same(await s.scheduler.runOnce(new Date((at + 1) * 1000)), { delivered: 3, failed: 0 });
  t.same(await s.scheduler.runOnce(new Date((at + 2) * 1000)), { delivered: 0, failed: 0 }, 'never twice');
  t.same(await list(s, alice), [], 'delivered messages leave the list');

  const inChannel = await newest(s, bob, [{ operator: 'channel', operand: sid }]);
  t.equal(inChannel.length, 1);
  t.match(inChannel[0], { sender_id: alice.id, subject: 'later', timestamp: at + 1, flags: ['mentioned'] });
  t.equal(inChannel[0].client, 'ZulipMobile', 'sent as from the client that scheduled it');
  t.match(inChannel[0].content, /user-mention/);
  const dms = await newest(s, bob, [{ operator: 'dm', operand: [alice.id] }]);
  t.match(dms, [{ sender_id: alice.id, content: '<p>dm later</p>', flags: [] }]);
  const own = await newest(s, alice, [{ operator: 'dm', operand: [bob.id] }]);
  t.same(own[0].flags, ['read'], 'read by the sender by default');
  const self = await newest(s, alice, [{ operator: 'dm', operand: [alice.id] }]);
  t.same(self[0].flags, [], 'a note to self arrives unread, as on the real server');

  const late = await s.api('PATCH', `/scheduled_messages/${id}`, alice, { content: 'too late' });
  t.equal(late.status, 400);
  t.match(late.body, { msg: 'Scheduled message was already sent' });
  t.equal((await s.api('DELETE', `/scheduled_messages/${dm}`, alice)).status, 200, 'deleting a delivered one is allowed, as on the real server');
  t.ok(note);
});

t.test('failure: the message stays, failed, until rescheduled', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, bob, 'sched-private', [alice], { invite_only: true });
  const at = nowSeconds() + 60;
  const id = await schedule(s, alice, { type: 'stream', to: sid, topic: 't', content: 'secret plan', scheduled_delivery_timestamp: at });
  await unsubscribe(s, alice, 'sched-private', [alice]);

  t.same(await s.scheduler.runOnce(new Date((at + 1) * 1000)), { delivered: 0, failed: 1 });
  t.match(await list(s, alice), [{ scheduled_message_id: id, failed: true, content: 'secret plan' }]);
  t.same(await newest(s, bob, [{ operator: 'channel', operand: sid }]), [], 'nothing was sent');
  t.same(await s.scheduler.runOnce(new Date((at + 2) * 1000)), { delivered: 0, failed: 0 }, 'a failed message is not retried');

  const noTime = await s.api('PATCH', `/scheduled_messages/${id}`, alice, { content: 'retry' });
  t.equal(noTime.status, 400);
  t.match(noTime.body, { msg: 'Scheduled delivery time must be in the future.' });
  await subscribe(s, bob, 'sched-private', [alice]);
  const again = nowSeconds() + 120;
  t.equal((await s.api('PATCH', `/scheduled_messages/${id}`, alice, { scheduled_delivery_timestamp: again })).status, 200);
  t.match(await list(s, alice), [{ scheduled_message_id: id, failed: false, scheduled_delivery_timestamp: again }]);
  t.same(await s.scheduler.runOnce(new Date((again + 1) * 1000)), { delivered: 1, failed: 0 });
  t.match(await newest(s, bob, [{ operator: 'channel', operand: sid }]), [{ content: '<p>secret plan</p>', sender_id: alice.id }]);
});

t.test('failure: too late after downtime, and a deactivated sender', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const at = nowSeconds() + 60;
  const stale = await schedule(s, alice, { type: 'direct', to: [bob.id], content: 'stale', scheduled_delivery_timestamp: at });
  // Ten minutes late is still sent; later than that it fails, as on the real server. (Messages
  // of earlier tests come due too: only this one is checked.)
  await s.scheduler.runOnce(new Date((at + 10 * 60 + 1) * 1000));
  t.match(await list(s, alice), [{ scheduled_message_id: stale, failed: true }]);
  const row = await s.platform.db.selectFrom('scheduled_messages').select('failure_message').where('id', '=', stale).executeTakeFirstOrThrow();
  t.equal(row.failure_message, 'Message could not be sent at the scheduled time.');

  const carol = await s.user(Role.MEMBER, 'Carol');
  const at2 = nowSeconds() + 60;
  const gone = await schedule(s, carol, { type: 'direct', to: [bob.id], content: 'from the departed', scheduled_delivery_timestamp: at2 });
  t.equal((await s.api('DELETE', `/users/${carol.id}`, s.owner)).status, 200);
  t.same(await s.scheduler.runOnce(new Date((at2 + 1) * 1000)), { delivered: 0, failed: 1 });
  const failed = await s.platform.db.selectFrom('scheduled_messages').select(['failed', 'failure_message']).where('id', '=', gone).executeTakeFirstOrThrow();
  t.same(failed, { failed: true, failure_message: 'Account is deactivated' });
  t.same(await newest(s, bob, [{ operator: 'dm', operand: [carol.id] }]), []);
});

t.test('a failed send is told to its sender by Notification Bot, once, as the real server words it', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, bob, 'plans-private', [alice], { invite_only: true });
  const at = nowSeconds() + 60;
  await schedule(s, alice, { type: 'stream', to: sid, topic: 't', content: 'secret plan', scheduled_delivery_timestamp: at });
  await unsubscribe(s, alice, 'plans-private', [alice]);

  t.same(await s.scheduler.runOnce(new Date((at + 1) * 1000)), { delivered: 0, failed: 1 });
  const registered = (await s.api('POST', '/register', alice, { fetch_event_types: ['realm_user'] })).body;
  const notificationBot = (registered.cross_realm_bots as any[]).find((u) => u.email === 'notification-bot@zulip.com');
  t.ok(notificationBot, 'the organization has a Notification Bot');
  const dms = await newest(s, alice, [{ operator: 'dm', operand: [notificationBot.user_id] }]);
  t.equal(dms.length, 1, 'one direct message');
  t.equal(dms[0].sender_id, notificationBot.user_id);
  t.match(dms[0].content, /^<p>The message you scheduled for <time datetime="[^"]+">[^<]+<\/time>\s+was not sent because of the following error:<\/p>\n<blockquote>\n<p>[^<]+<\/p>\n<\/blockquote>\n<p><a href="#scheduled">View scheduled messages<\/a><\/p>$/);
  t.same(await s.scheduler.runOnce(new Date((at + 2) * 1000)), { delivered: 0, failed: 0 });
  t.equal((await newest(s, alice, [{ operator: 'dm', operand: [notificationBot.user_id] }])).length, 1, 'told once');

  // A deactivated sender's message fails without a notice (nobody would read it).
  const carol = await s.user(Role.MEMBER, 'Carol');
  const later = nowSeconds() + 120;
  await schedule(s, carol, { type: 'private', to: [bob.id], content: 'bye', scheduled_delivery_timestamp: later });
  t.equal((await s.api('DELETE', `/users/${carol.id}`, s.owner)).status, 200);
  t.same(await s.scheduler.runOnce(new Date((later + 1) * 1000)), { delivered: 0, failed: 1 });
  const ownerView = await newest(s, s.owner, [{ operator: 'dm', operand: [notificationBot.user_id, carol.id] }]);
  t.same(ownerView, []);
});

t.test('failure: the channel was archived, or a recipient deactivated, before the time came', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const sid = await createChannel(s, alice, 'sched-archived', [bob]);
  const at = nowSeconds() + 60;
  const toChannel = await schedule(s, alice, { type: 'stream', to: sid, topic: 't', content: 'to an archived channel', scheduled_delivery_timestamp: at });
  const toGroup = await schedule(s, alice, { type: 'direct', to: [bob.id, carol.id], content: 'to a departed user', scheduled_delivery_timestamp: at });
  t.equal((await s.api('DELETE', `/streams/${sid}`, s.owner)).status, 200);
  t.equal((await s.api('DELETE', `/users/${carol.id}`, s.owner)).status, 200);
  // Scheduling to it now is refused as the real server's send path words it (it finds the channel, archived).
  const late = await s.api('POST', '/scheduled_messages', alice, { type: 'stream', to: sid, topic: 't', content: 'c', scheduled_delivery_timestamp: at });
  t.same([late.status, late.body.msg], [400, "Not authorized to send to channel 'sched-archived'"]);
  const moved = await s.api('PATCH', `/scheduled_messages/${toGroup}`, alice, { type: 'stream', to: sid, topic: 't' });
  t.same([moved.status, moved.body.msg], [400, "Not authorized to send to channel 'sched-archived'"]);
  // The scheduled messages stay (the real server keeps them) until their time.
  t.match(await list(s, alice), [{ scheduled_message_id: toChannel, failed: false }, { scheduled_message_id: toGroup, failed: false }]);

  await s.scheduler.runOnce(new Date((at + 1) * 1000));
  const rows = await s.platform.db.selectFrom('scheduled_messages').select(['id', 'failed', 'failure_message']).where('id', 'in', [toChannel, toGroup]).orderBy('id').execute();
  // As the real server's send path words them.
  t.same(rows.map((r) => [r.id, r.failed, r.failure_message]), [
    [toChannel, true, "Not authorized to send to channel 'sched-archived'"],
    [toGroup, true, rows[1]!.failure_message],
  ]);
  t.match(rows[1]!.failure_message, /^'[^']+' is no longer using Zulip\.$/);
  t.same(await newest(s, bob, [{ operator: 'dm', operand: [alice.id, carol.id] }]), [], 'nothing was sent');
});

t.test('read_by_sender given explicitly decides the delivered message\'s read flag for the sender', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const at = nowSeconds() + 60;
  await schedule(s, alice, { type: 'direct', to: [bob.id], content: 'left unread', read_by_sender: false, scheduled_delivery_timestamp: at });
  await schedule(s, alice, { type: 'direct', to: [alice.id], content: 'read note', read_by_sender: true, scheduled_delivery_timestamp: at });
  const bad = await s.api('POST', '/scheduled_messages', alice, { type: 'direct', to: [bob.id], content: 'x', read_by_sender: 'maybe', scheduled_delivery_timestamp: at });
  t.same([bad.status, bad.body.msg], [400, 'Argument "read_by_sender" is not valid JSON.']);
  await s.scheduler.runOnce(new Date((at + 1) * 1000));
  t.same((await newest(s, alice, [{ operator: 'dm', operand: [bob.id] }]))[0].flags, [], 'read_by_sender false: unread for the sender');
  t.same((await newest(s, alice, [{ operator: 'dm', operand: [alice.id] }]))[0].flags, ['read'], 'read_by_sender true: even a note to self is read');
});
