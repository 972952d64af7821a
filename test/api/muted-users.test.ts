import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';

t.test('muting users: rules and errors', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const gone = await s.user(Role.MEMBER, 'Gone');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: alice.id });
  await s.api('DELETE', `/users/${gone.id}`, s.owner);

  const self = await s.api('POST', `/users/me/muted_users/${alice.id}`, alice);
  t.equal(self.status, 400);
  t.same(self.body, { result: 'error', msg: 'Cannot mute self', code: 'BAD_REQUEST' });
  for (const id of [999999, 0, 99999999999]) {
    const unknown = await s.api('POST', `/users/me/muted_users/${id}`, alice);
    t.equal(unknown.status, 400, `user ${id}`);
    t.equal(unknown.body.msg, 'No such user');
  }
  const notInt = await s.api('POST', '/users/me/muted_users/abc', alice);
  t.equal(notInt.status, 404, 'an integer in the path takes digits only: no route');

  const mute = await s.api('POST', `/users/me/muted_users/${bob.id}`, alice);
  t.same(mute.body, { result: 'success', msg: '' });
  const twice = await s.api('POST', `/users/me/muted_users/${bob.id}`, alice);
  t.same(twice.body, { result: 'error', msg: 'User already muted', code: 'BAD_REQUEST' });
  t.equal((await s.api('POST', `/users/me/muted_users/${gone.id}`, alice)).status, 200, 'a deactivated user may be muted');
  t.equal((await s.api('POST', `/users/me/muted_users/${bot.id}`, alice)).status, 200, 'a bot may be muted');

  const reg = await s.api('POST', '/register', alice, { fetch_event_types: ['muted_users'] });
  t.same(reg.body.muted_users.map((m: any) => m.id), [bob.id, gone.id, bot.id].sort((a, b) => a - b));
  t.ok(reg.body.muted_users.every((m: any) => Number.isInteger(m.timestamp) && m.timestamp > 1_600_000_000), 'timestamps in seconds');
  const bobs = await s.api('POST', '/register', bob, { fetch_event_types: ['muted_users'] });
  t.same(bobs.body.muted_users, [], 'mutes are per user: Bob does not learn he is muted');

  const unmute = await s.api('DELETE', `/users/me/muted_users/${bob.id}`, alice);
  t.same(unmute.body, { result: 'success', msg: '' });
  const notMuted = await s.api('DELETE', `/users/me/muted_users/${bob.id}`, alice);
  t.same(notMuted.body, { result: 'error', msg: 'User is not muted', code: 'BAD_REQUEST' });
  const unknown = await s.api('DELETE', '/users/me/muted_users/999999', alice);
  t.equal(unknown.body.msg, 'No such user');
  t.equal((await s.api('POST', `/users/me/muted_users/${bob.id}`, null)).status, 401);
});

t.test('messages from a muted user arrive read; muting marks the old ones read', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const channel = await createChannel(s, bob, 'general-chat', { subscribers: [alice.id, bob.id, carol.id] });
  const send = async (params: Record<string, unknown>) => {
    const res = await s.api('POST', '/messages', bob, params);
    t.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as number;
  };
  const flagsOf = async (user: typeof alice, id: number) => (await s.api('GET', `/messages/${id}`, user)).body.message.flags as string[];

  const before = await send({ type: 'stream', to: channel, topic: 'old', content: 'before the mute' });
  t.notOk((await flagsOf(alice, before)).includes('read'));

  const events = await verifyAction(t, s, alice, () => s.api('POST', `/users/me/muted_users/${bob.id}`, alice), {
    register: { fetch_event_types: ['muted_users', 'message', 'update_message_flags'], event_types: ['muted_users', 'update_message_flags'] },
  });
  t.same(events.map((e) => e.type).sort(), ['muted_users', 'update_message_flags']);
  const flagEvent = events.find((e) => e.type === 'update_message_flags')!;
  t.same([flagEvent.op, flagEvent.flag, flagEvent.messages], ['add', 'read', [before]], 'the unread message of the muted user is marked read');
  t.ok((await flagsOf(alice, before)).includes('read'));

  const channelMsg = await send({ type: 'stream', to: channel, topic: 'new', content: 'after the mute' });
  const dm = await send({ type: 'direct', to: [alice.id], content: 'a 1:1 DM' });
  const groupDm = await send({ type: 'direct', to: [alice.id, carol.id], content: 'a group DM' });
  for (const id of [channelMsg, dm, groupDm]) {
    t.ok((await flagsOf(alice, id)).includes('read'), `message ${id} arrives read for the muter, and is still delivered`);
    t.notOk((await flagsOf(carol, id === dm ? groupDm : id)).includes('read'), 'not for others');
  }
  const reg = await s.api('POST', '/register', alice, { fetch_event_types: ['message', 'update_message_flags'] });
  t.equal(reg.body.unread_msgs.count, 0, 'unread counts leave out the muted sender');
  const carolReg = await s.api('POST', '/register', carol, { fetch_event_types: ['message', 'update_message_flags'] });
  t.equal(carolReg.body.unread_msgs.count, 3);

  // The send event itself carries the read flag, and folding it keeps the state equal.
  const sent = await verifyAction(t, s, alice, () => send({ type: 'direct', to: [alice.id], content: 'another' }), {
    register: { fetch_event_types: ['message', 'update_message_flags'], event_types: ['message'] },
  });
  t.ok(sent[0]!.flags.includes('read'));

  await s.api('DELETE', `/users/me/muted_users/${bob.id}`, alice);
  const later = await send({ type: 'direct', to: [alice.id], content: 'after unmuting' });
  t.notOk((await flagsOf(alice, later)).includes('read'), 'after unmuting messages arrive unread again');
});

t.test('muted_users events keep the registered state equal to a fresh one', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const register = { event_types: ['muted_users'], fetch_event_types: ['muted_users'] };
  const mute = await verifyAction(t, s, alice, () => s.api('POST', `/users/me/muted_users/${bob.id}`, alice), { register });
  t.same(mute.map((e) => e.muted_users.map((m: any) => m.id)), [[bob.id]]);
  await verifyAction(t, s, alice, () => s.api('POST', `/users/me/muted_users/${carol.id}`, alice), {
    register,
    expect: (events) => t.same(events.map((e) => e.muted_users.map((m: any) => m.id)), [[bob.id, carol.id]]),
  });
  await verifyAction(t, s, alice, () => s.api('DELETE', `/users/me/muted_users/${bob.id}`, alice), {
    register,
    expect: (events) => t.same(events.map((e) => e.muted_users.map((m: any) => m.id)), [[carol.id]]),
  });
  const failed = await verifyAction(t, s, alice, () => s.api('DELETE', `/users/me/muted_users/${bob.id}`, alice), { register });
  t.same(failed, [], 'a refused request sends nothing');
  const other = await verifyAction(t, s, bob, () => s.api('POST', `/users/me/muted_users/${bob.id === alice.id ? carol.id : alice.id}`, carol), { register });
  t.same(other, [], "another user's mutes are not sent to Bob");
});

t.test('concurrent sends to one channel from several senders: distinct ids, each sender\'s own muters', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const dave = await s.user(Role.MEMBER, 'Dave');
  const channel = await createChannel(s, bob, 'busy', { subscribers: [alice.id, bob.id, carol.id, dave.id] });
  t.equal((await s.api('POST', `/users/me/muted_users/${bob.id}`, alice)).status, 200);
  t.equal((await s.api('POST', `/users/me/muted_users/${carol.id}`, dave)).status, 200);
  const senders = [bob, carol, dave, bob, carol, dave, bob, carol, dave, bob, carol, dave];
  // Sent together, to the channel by id and by name: the look-ups are shared while one is out.
  const sent = await Promise.all(senders.map((sender, i) =>
    s.api('POST', '/messages', sender, { type: 'stream', to: i % 2 ? channel : 'busy', topic: 't', content: `message ${i}` })));
  t.same(sent.map((r) => r.status), senders.map(() => 200));
  const ids = sent.map((r) => r.body.id as number);
  t.equal(new Set(ids).size, ids.length, 'every message its own id');
  const readFor = async (user: typeof alice, id: number) => ((await s.api('GET', `/messages/${id}`, user)).body.message.flags as string[]).includes('read');
  for (const [i, sender] of senders.entries()) {
    const id = ids[i]!;
    const message = (await s.api('GET', `/messages/${id}`, alice)).body.message;
    t.equal(message.content, `<p>message ${i}</p>`, `message ${i} holds its own text`);
    t.equal(message.sender_id, sender.id);
    t.equal(await readFor(alice, id), sender === bob, `message ${i}: read for Alice only if Bob sent it`);
    t.equal(await readFor(dave, id), sender === carol || sender === dave, `message ${i}: read for Dave if Carol (muted) or Dave himself sent it`);
  }
  const missing = await Promise.all([1, 2].map(() => s.api('POST', '/messages', bob, { type: 'stream', to: 'no such channel', topic: 't', content: 'x' })));
  t.same(missing.map((r) => r.body.code), ['STREAM_DOES_NOT_EXIST', 'STREAM_DOES_NOT_EXIST'], 'concurrent sends to a missing channel are all refused');
});
