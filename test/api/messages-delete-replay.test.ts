import t from 'tap';
import { startTestServer, Role, basicAuth, type TestUser } from '../helpers/server.js';
import { verifyAction, verifyActionForEach } from '../helpers/verify-action.js';
import { createChannel, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

// DELETE /messages/{id} by the rules of the real server's message deletion tests.

const shared = startTestServer(t);
const del = async (s: Awaited<typeof shared>, as: TestUser, id: number) => {
  const r = await s.api('DELETE', `/messages/${id}`, as);
  return [r.status, r.body.code ?? null, r.body.msg] as const;
};
const ok = [200, null, ''] as const;
const bad = (msg: string) => [400, 'BAD_REQUEST', msg] as const;
const denied = bad("You don't have permission to delete this message");

t.test('who may delete', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const shiva = await s.user(Role.MODERATOR, 'Shiva');
  const polonius = await s.user(Role.GUEST, 'Polonius');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  await createChannel(s, hamlet, 'denmark-del', [cordelia, shiva, polonius, iago]);
  const send = (as: TestUser) => sendStream(s, as, 'denmark-del', 'topic', 'to delete');
  const policy = (delete_own_message_policy: number, extra: Record<string, unknown> = {}) =>
    s.api('PATCH', '/realm', s.owner, { delete_own_message_policy, ...extra });
  try {
    await policy(2);
    const m = await send(hamlet);
    t.same(await del(s, hamlet, m), denied, 'administrators only: not the sender');
    t.same(await del(s, cordelia, m), denied);
    t.same(await del(s, iago, m), ok, 'administrators delete any message');
    t.same(await del(s, iago, m), bad('Invalid message(s)'), 'a deleted message is gone');

    await policy(5);
    t.same(await del(s, cordelia, await send(hamlet)), denied, "everyone: their own messages, not others'");
    t.same(await del(s, shiva, await send(hamlet)), denied, 'moderators neither');
    t.same(await del(s, hamlet, await send(hamlet)), ok);
    t.same(await del(s, polonius, await send(polonius)), ok, 'guests too');

    await policy(1);
    t.same(await del(s, polonius, await send(polonius)), denied, 'members: not guests');
    t.same(await del(s, cordelia, await send(cordelia)), ok);
    await policy(4);
    t.same(await del(s, cordelia, await send(cordelia)), denied, 'moderators: not members');
    t.same(await del(s, shiva, await send(shiva)), ok);
    await policy(3, { waiting_period_threshold: 100_000 });
    t.same(await del(s, cordelia, await send(cordelia)), denied, 'full members: not one within the waiting period');
    t.same(await del(s, shiva, await send(shiva)), ok, 'moderators rank above full members');
    await policy(3, { waiting_period_threshold: 0 });
    t.same(await del(s, cordelia, await send(cordelia)), ok);
  } finally {
    await policy(5, { waiting_period_threshold: 0 });
  }
});

t.test("a bot's messages: its owner deletes them as their own", async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const created = await s.api('POST', '/bots', hamlet, { full_name: 'Test Bot', short_name: `testbot${hamlet.id}`, bot_type: 1 });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const email = (await s.api('GET', `/users/${created.body.user_id}`, hamlet)).body.user.email as string;
  const bot: TestUser = { id: created.body.user_id, email, apiKey: created.body.api_key, auth: basicAuth(email, created.body.api_key) };
  await createChannel(s, hamlet, 'bots-del', [cordelia, bot]);
  const send = () => sendStream(s, bot, 'bots-del', 'topic', 'bot says');
  t.same(await del(s, cordelia, await send()), denied);
  t.same(await del(s, hamlet, await send()), ok, "the bot's owner");
  t.same(await del(s, bot, await send()), ok, 'the bot itself');
  try {
    await s.api('PATCH', '/realm', s.owner, { delete_own_message_policy: 2 });
    t.same(await del(s, hamlet, await send()), denied, "the owner is held to the policy for their bot's messages");
  } finally {
    await s.api('PATCH', '/realm', s.owner, { delete_own_message_policy: 5 });
  }
});

t.test('deleting needs access now', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  await createChannel(s, hamlet, 'private-del', [iago], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, hamlet, 'private-del', 'editing', 'before edit');
  await unsubscribe(s, iago, 'private-del', [iago]);
  t.same(await del(s, iago, m), bad('Invalid message(s)'), 'an administrator who left a protected channel');
  await subscribe(s, hamlet, 'private-del', [iago]);
  t.same(await del(s, iago, m), ok, 'and again after subscribing');

  const archived = await createChannel(s, hamlet, 'archived-del', []);
  const a = await sendStream(s, hamlet, 'archived-del', 'editing', 'before edit');
  t.equal((await s.api('DELETE', `/streams/${archived}`, s.owner)).status, 200);
  t.same(await del(s, hamlet, a), bad('Invalid message(s)'), 'nothing in an archived channel');
  t.same(await del(s, s.owner, a), bad('Invalid message(s)'), 'not even for administrators');
});

t.test("deleting a channel's first message moves its first_message_id", async (t) => {
  const s = await shared;
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const sid = await createChannel(s, cordelia, 'firsts-del', []);
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) ids.push(await sendStream(s, cordelia, 'firsts-del', 'topic', `message ${i}`));
  const first = async () => (await s.api('GET', `/streams/${sid}`, cordelia)).body.stream.first_message_id;
  const register = { event_types: ['stream', 'delete_message'], fetch_event_types: ['subscription'], client_capabilities: { bulk_message_deletion: true } };
  await del(s, cordelia, ids[2]!);
  t.equal(await first(), ids[0], 'not the first: unchanged');
  const events = await verifyAction(t, s, cordelia, () => s.api('DELETE', `/messages/${ids[0]}`, cordelia), { register });
  t.equal(await first(), ids[1]);
  t.match(events, [
    { type: 'delete_message', message_ids: [ids[0]], stream_id: sid },
    { type: 'stream', op: 'update', stream_id: sid, property: 'first_message_id', value: ids[1] },
  ]);
  await del(s, cordelia, ids[1]!);
  await del(s, cordelia, ids[3]!);
  t.equal(await first(), null, 'none left');
});

t.test('who hears of a deletion: readers of the message now and the one deleting, told of every id', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const late = await s.user(Role.MEMBER, 'Late Joiner');
  const leaver = await s.user(Role.MEMBER, 'Leaver');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const register = { event_types: ['delete_message'], client_capabilities: { bulk_message_deletion: true } };
  const poll = async (u: TestUser, reg: { body: Record<string, any> }) =>
    (await s.api('GET', '/events', u, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true })).body.events as Array<Record<string, any>>;

  // A private channel whose history subscribers share: one who joined after the message reads it (and hears),
  // one who received it and left does not.
  const sid = await createChannel(s, hamlet, 'shared-history-del', [leaver], { invite_only: true, history_public_to_subscribers: true });
  const m = await sendStream(s, hamlet, 'shared-history-del', 'Topic', 'words');
  await subscribe(s, hamlet, 'shared-history-del', [late]);
  await unsubscribe(s, leaver, 'shared-history-del', [leaver]);
  const [forLate, forHamlet] = await verifyActionForEach(t, s, [late, hamlet], () => s.api('DELETE', `/messages/${m}`, hamlet), { register });
  t.same(forLate, [{ type: 'delete_message', message_type: 'stream', stream_id: sid, topic: 'Topic', message_ids: [m], id: forLate![0]?.id }]);
  t.equal(forHamlet!.length, 1);

  const m2 = await sendStream(s, hamlet, 'shared-history-del', 'Topic', 'more words');
  const leaverReg = await s.api('POST', '/register', leaver, register);
  t.same((await del(s, hamlet, m2)), ok);
  t.same(await poll(leaver, leaverReg), [], 'one who left a private channel hears nothing');

  // An administrator deleting in a public channel they never joined hears of it.
  await createChannel(s, hamlet, 'public-unjoined-del', []);
  const p = await sendStream(s, hamlet, 'public-unjoined-del', 'topic', 'hello');
  const events = await verifyAction(t, s, iago, () => s.api('DELETE', `/messages/${p}`, iago), { register });
  t.match(events, [{ type: 'delete_message', message_ids: [p] }]);
});

t.test('a topic deletion without bulk_message_deletion: one event per message, each with the topic', async (t) => {
  const s = await shared;
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const late = await s.user(Role.MEMBER, 'Late Joiner');
  const sid = await createChannel(s, iago, 'per-message-del', []);
  const ids = [await sendStream(s, iago, 'per-message-del', 'doomed', 'one'), await sendStream(s, iago, 'per-message-del', 'doomed', 'two')];
  await subscribe(s, iago, 'per-message-del', [late]);
  const events = await verifyAction(t, s, late, () => s.api('POST', `/streams/${sid}/delete_topic`, iago, { topic_name: 'doomed' }), {
    register: { event_types: ['delete_message'], client_capabilities: { bulk_message_deletion: false } },
  });
  t.match(events, ids.map((id) => ({ type: 'delete_message', message_type: 'stream', stream_id: sid, topic: 'doomed', message_id: id })));
  t.ok(events.every((e) => !('message_ids' in e)));
});
