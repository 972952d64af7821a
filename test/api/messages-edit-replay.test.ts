import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendDm, sendStream, unsubscribe } from '../helpers/channels-fixture.js';

// PATCH /messages/{id} and GET /messages/{id}/history by the rules of the real server's message
// editing tests: the order and text of its refusals, what an edit stores, and the flags it changes.

const shared = startTestServer(t);
const patch = async (s: Awaited<typeof shared>, as: Parameters<Awaited<typeof shared>['api']>[2], id: number, params: Record<string, unknown>) => {
  const r = await s.api('PATCH', `/messages/${id}`, as, params);
  return [r.status, r.body.code ?? null, r.body.msg] as const;
};
const ok = [200, null, ''] as const;
const bad = (msg: string) => [400, 'BAD_REQUEST', msg] as const;

t.test('the shape of an edit request', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'shape', [bob]);
  const other = await createChannel(s, alice, 'shape-other', [bob]);
  const m = await sendStream(s, alice, 'shape', 'editing', 'before edit');

  t.same(await patch(s, alice, m, {}), bad('Nothing to change'));
  t.same(await patch(s, alice, m, { topic: 'editing' }), bad('Nothing to change'), 'the same topic is no change');
  t.same(await patch(s, alice, m, { topic: '  editing ' }), bad('Nothing to change'), 'compared once stripped');
  t.same(await patch(s, alice, m, { topic: ' ' }), bad("Topic can't be empty!"));
  t.same(await patch(s, alice, m, { topic: 'a\u0007b' }), bad('Invalid character in topic, at position 2!'));
  t.same(await patch(s, alice, m, { content: 'x', propagate_mode: 'change_all' }), bad('Invalid propagate_mode without topic edit'));
  t.same(await patch(s, alice, m, { content: 'y', topic: 'editing', propagate_mode: 'change_later' }), bad('Invalid propagate_mode without topic edit'),
    'an unchanged topic does not make a move');
  t.same(await patch(s, alice, m, { content: 'x', stream_id: other }), bad('Cannot change message content while changing channel'));

  const dm = await sendDm(s, alice, [bob], 'a direct message');
  t.same(await patch(s, alice, dm, { stream_id: other }), bad('Direct messages cannot be moved to channels.'));
  t.same(await patch(s, alice, dm, { topic: 'x' }), bad('Direct messages cannot have topics.'));
  t.same(await patch(s, alice, dm, { content: 'edited' }), ok, 'the content of a direct message may change');

  const poll = await sendStream(s, alice, 'shape', 'editing', '/poll Games?\nYES\nNO');
  t.same(await patch(s, alice, poll, { content: '/poll Games?\nYES\nNO\nMaybe' }), bad('Widgets cannot be edited.'));
  t.same(await patch(s, alice, poll, { topic: 'polls' }), ok, 'a widget message still moves');
  t.same(await patch(s, alice, 999_999, { content: 'x' }), bad('Invalid message(s)'));

  const long = 't'.repeat(70);
  t.same(await patch(s, alice, m, { topic: `  ${long}  ` }), ok);
  t.equal((await s.api('GET', `/messages/${m}`, alice)).body.message.subject, `${'t'.repeat(57)}...`, 'a long topic is cut as when sending');
});

t.test('what a content edit stores', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, alice, 'stores', []);
  const m = await sendStream(s, alice, 'stores', 'editing', 'before edit');

  t.same(await patch(s, alice, m, { content: ' ' }), ok);
  t.equal((await s.api('GET', `/messages/${m}`, alice)).body.raw_content, '(deleted)', 'blank content becomes "(deleted)"');
  t.same(await patch(s, alice, m, { content: '(deleted)' }), ok);
  const history = (await s.api('GET', `/messages/${m}/history`, alice)).body.message_history;
  t.equal(history.length, 3, 'the same content again is still an edit, with its history entry');
  t.match(history[2], { content: '(deleted)', prev_content: '(deleted)', user_id: alice.id });

  const unedited = await sendStream(s, alice, 'stores', 'editing', 'never edited');
  const single = (await s.api('GET', `/messages/${unedited}/history`, alice)).body.message_history;
  t.same(single.map((h: Record<string, unknown>) => Object.keys(h).sort()), [['content', 'rendered_content', 'timestamp', 'topic', 'user_id']]);
});

t.test('edit history through content, topic and channel changes', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const s1 = await createChannel(s, hamlet, 'history 1', [iago]);
  const s2 = await createChannel(s, hamlet, 'history 2', [iago]);
  const s3 = await createChannel(s, hamlet, 'history 3', [iago]);
  const m = await sendStream(s, hamlet, 'history 1', 'topic 1', 'content 1');
  const stored = async () => (await s.api('GET', `/messages/${m}`, hamlet)).body.message.edit_history[0];

  t.same(await patch(s, hamlet, m, { content: 'content 2' }), ok);
  t.same(Object.keys(await stored()).sort(), ['prev_content', 'prev_rendered_content', 'prev_rendered_content_version', 'timestamp', 'user_id']);
  t.same(await patch(s, hamlet, m, { topic: 'topic 2' }), ok);
  t.same(Object.keys(await stored()).sort(), ['prev_topic', 'timestamp', 'topic', 'user_id']);
  t.same(await patch(s, iago, m, { stream_id: s2 }), ok);
  t.match(await stored(), { prev_stream: s1, stream: s2, user_id: iago.id });
  t.same(Object.keys(await stored()).sort(), ['prev_stream', 'stream', 'timestamp', 'user_id']);
  t.same(await patch(s, hamlet, m, { content: 'content 3', topic: 'topic 3' }), ok);
  t.same(await patch(s, hamlet, m, { content: 'content 4' }), ok);
  t.same(await patch(s, iago, m, { topic: 'topic 4', stream_id: s3 }), ok);
  t.same(Object.keys(await stored()).sort(), ['prev_stream', 'prev_topic', 'stream', 'timestamp', 'topic', 'user_id']);

  const history = (await s.api('GET', `/messages/${m}/history`, hamlet)).body.message_history as Array<Record<string, unknown>>;
  t.equal(history.length, 7);
  t.same(history.map((h) => [h.topic, h.content]), [
    ['topic 1', 'content 1'], ['topic 1', 'content 2'], ['topic 2', 'content 2'], ['topic 2', 'content 2'],
    ['topic 3', 'content 3'], ['topic 3', 'content 4'], ['topic 4', 'content 4'],
  ]);
  t.match(history[3], { prev_stream: s1, stream: s2 });
  t.match(history[4], { prev_topic: 'topic 2', prev_content: 'content 2' });
  t.match(history[6], { prev_topic: 'topic 3', prev_stream: s2, stream: s3, user_id: iago.id });
});

t.test('who may edit content', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  await createChannel(s, iago, 'who-content', [hamlet]);
  const m = await sendStream(s, iago, 'who-content', 'editing', 'before edit');
  t.same(await patch(s, hamlet, m, { content: 'content after edit' }), bad("You don't have permission to edit this message"));
  t.equal((await s.api('PATCH', '/realm', s.owner, { allow_message_editing: false })).status, 200);
  try {
    t.same(await patch(s, iago, m, { content: 'content after edit' }), bad('Your organization has turned off message editing'));
    t.same(await patch(s, hamlet, m, { content: 'content after edit' }), bad('Your organization has turned off message editing'),
      'the organization setting is checked before whose message it is');
    t.same(await patch(s, iago, m, { topic: 'still movable' }), ok, 'topics move with editing turned off');
  } finally {
    await s.api('PATCH', '/realm', s.owner, { allow_message_editing: true });
  }
});

t.test('who may change a topic', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const polonius = await s.user(Role.GUEST, 'Polonius');
  const shiva = await s.user(Role.MODERATOR, 'Shiva');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  await createChannel(s, hamlet, 'who-topic', [polonius, shiva, iago]);
  const m = await sendStream(s, hamlet, 'who-topic', 'topic', 'content');
  const policy = (edit_topic_policy: number, extra: Record<string, unknown> = {}) => s.api('PATCH', '/realm', s.owner, { edit_topic_policy, ...extra });
  let n = 0;
  const rename = (as: typeof hamlet) => patch(s, as, m, { topic: `topic ${++n}` });
  const denied = bad("You don't have permission to edit this message");
  try {
    await policy(5);
    t.same(await rename(polonius), ok, 'everyone: guests too');
    await policy(1);
    t.same(await rename(polonius), denied, 'members: not guests');
    t.same(await rename(hamlet), ok);
    await policy(3, { waiting_period_threshold: 10 });
    t.same(await rename(hamlet), denied, 'full members: not a member who joined within the waiting period, even the sender');
    t.same(await rename(shiva), ok, 'moderators rank above full members');
    await policy(3, { waiting_period_threshold: 0 });
    t.same(await rename(hamlet), ok);
    await policy(4);
    t.same(await rename(hamlet), denied, 'moderators: not members');
    t.same(await rename(shiva), ok);
    await policy(2);
    t.same(await rename(shiva), denied, 'administrators: not moderators');
    t.same(await rename(iago), ok);
    await policy(6);
    t.same(await rename(iago), denied, 'nobody: not administrators');
    t.same(await rename(s.owner), denied, 'nor owners');
  } finally {
    await policy(5, { waiting_period_threshold: 0 });
  }
});

t.test('changing a message needs access now', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  await createChannel(s, hamlet, 'protected-edit', [], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, hamlet, 'protected-edit', 'editing', 'before edit');
  t.same(await patch(s, hamlet, m, { content: 'while subscribed' }), ok);
  await unsubscribe(s, hamlet, 'protected-edit', [hamlet]);
  t.same(await patch(s, hamlet, m, { content: 'after unsubscribing' }), bad('Invalid message(s)'));
  // Reading by id needs a subscription now too; the history still shows what they received, unchanged.
  const history = await s.api('GET', '/messages', hamlet, { anchor: m, num_before: 0, num_after: 0, apply_markdown: false });
  t.equal(history.body.messages[0]?.content, 'while subscribed', 'still in their history, unchanged');

  const polonius = await s.user(Role.GUEST, 'Polonius');
  await createChannel(s, hamlet, 'public-edit', [polonius]);
  const g = await sendStream(s, polonius, 'public-edit', 'editing', 'before edit');
  t.same(await patch(s, polonius, g, { content: 'while subscribed' }), ok);
  await unsubscribe(s, polonius, 'public-edit', [polonius]);
  t.same(await patch(s, polonius, g, { content: 'after unsubscribing' }), bad('Invalid message(s)'), 'a guest who left a public channel');
});

t.test('a content edit sets and clears has_alert_word', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, alice, 'alerting', [bob, carol]);
  await s.api('POST', '/users/me/alert_words', bob, { alert_words: ['zebra'] });
  await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['giraffe'] });
  const register = { event_types: ['message', 'update_message'], fetch_event_types: ['message'], apply_markdown: true };
  const m = await sendStream(s, alice, 'alerting', 'animals', 'nothing yet');
  const flagsOf = async (u: typeof bob) => (await s.api('GET', `/messages/${m}`, u)).body.message.flags as string[];

  const added = await verifyAction(t, s, bob, () => s.api('PATCH', `/messages/${m}`, alice, { content: 'a zebra appears' }), { register });
  t.match(added, [{ type: 'update_message', message_id: m }]);
  t.ok(added[0]!.flags.includes('has_alert_word'), 'the update_message event carries the new flag');
  t.ok((await flagsOf(bob)).includes('has_alert_word'));
  t.notOk((await flagsOf(carol)).includes('has_alert_word'));

  const swapped = await verifyAction(t, s, bob, () => s.api('PATCH', `/messages/${m}`, alice, { content: 'a giraffe instead' }), { register });
  t.notOk(swapped[0]!.flags.includes('has_alert_word'), 'cleared when the word is gone');
  t.notOk((await flagsOf(bob)).includes('has_alert_word'));
  t.ok((await flagsOf(alice)).includes('has_alert_word'), "the sender's own alert words count too");
  await s.api('PATCH', `/messages/${m}`, alice, { topic: 'zebra crossing' });
  t.notOk((await flagsOf(bob)).includes('has_alert_word'), 'a topic is not content');
});

t.test('who may move messages to another channel', async (t) => {
  const s = await shared;
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const shiva = await s.user(Role.MODERATOR, 'Shiva');
  await createChannel(s, iago, 'move-from', [othello, shiva]);
  const secret = await createChannel(s, othello, 'move-secret', [], { invite_only: true });
  const unsubscribed = await createChannel(s, othello, 'move-public', []);
  const m = await sendStream(s, iago, 'move-from', 'test', 'First');
  t.same(await patch(s, iago, m, { stream_id: secret }), bad('Invalid channel ID'), 'an administrator needs a subscription to a private target');
  t.same(await patch(s, iago, m, { stream_id: 999_999 }), bad('Invalid channel ID'));

  const restricted = await createChannel(s, iago, 'move-new-members', [othello, shiva], { stream_post_policy: 3 });
  const o = await sendStream(s, othello, 'move-from', 'test', 'by othello');
  try {
    await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 100_000 });
    t.same(await patch(s, othello, o, { stream_id: restricted }), bad('New members cannot send to this channel.'), "the target's posting policy");
    t.same((await s.api('POST', '/messages', othello, { type: 'stream', to: 'move-new-members', topic: 't', content: 'x' })).body.msg,
      'New members cannot send to this channel.', 'as when sending');
    t.same(await patch(s, shiva, o, { stream_id: restricted }), ok, 'moderators are no new members');
    await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 0 });
    t.same(await patch(s, othello, o, { stream_id: unsubscribed }), ok, 'a public target needs no subscription');

    await s.api('PATCH', '/realm', s.owner, { move_messages_between_streams_policy: 6 });
    t.same(await patch(s, s.owner, o, { stream_id: restricted }), bad("You don't have permission to move this message"), 'nobody: not even owners');
  } finally {
    await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 0, move_messages_between_streams_policy: 1 });
  }
});

t.test("Notification Bot's notices of moves", async (t) => {
  // A second server: only a full organization has Notification Bot.
  const s = await startTestServer(t, {}, { organization: 'full' });
  const realmUrl = (await s.api('GET', '/server_settings', null)).body.realm_url as string;
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const mover = `@_**Iago|${iago.id}**`;
  let n = 0;
  const prepare = async () => {
    n += 1;
    const from = `old ${n}`;
    const to = `new ${n}`;
    const toId = await createChannel(s, iago, to, [bob]);
    await createChannel(s, iago, from, [bob]);
    const ids = [];
    for (const content of ['First', 'Second', 'third']) ids.push(await sendStream(s, iago, from, 'test', content));
    return { from, to, toId, ids };
  };
  const topic = async (stream: string, name: string, as = iago) => (await s.api('GET', '/messages', as, {
    anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false,
    narrow: [{ operator: 'channel', operand: stream }, { operator: 'topic', operand: name }],
  })).body.messages as Array<{ id: number; content: string; sender_full_name: string; flags: string[] }>;
  const contents = async (stream: string, name: string) => (await topic(stream, name)).map((m) => m.content);

  await t.test('one message to another channel, both notices', async (t) => {
    const { from, to, toId, ids } = await prepare();
    t.same(await patch(s, iago, ids[1]!, { stream_id: toId, propagate_mode: 'change_one', send_notification_to_old_thread: true }), ok);
    t.same(await contents(from, 'test'), ['First', 'third', `A message was moved from this topic to #**${to}>test** by ${mover}.`]);
    const link = `${realmUrl}/#narrow/channel/${toId}-${to.replace(' ', '-')}/topic/test/near/${ids[1]}`;
    t.same(await contents(to, 'test'), ['Second', `[A message](${link}) was moved here from #**${from}>test** by ${mover}.`]);
    const [, notice] = await topic(to, 'test', bob);
    t.equal(notice!.sender_full_name, 'Notification Bot');
    t.same(notice!.flags, [], 'unread for the others');
    t.same((await topic(to, 'test'))[1]!.flags, ['read'], 'read for the mover');
  });

  await t.test('a whole topic, and part of one', async (t) => {
    const a = await prepare();
    t.same(await patch(s, iago, a.ids[1]!, { stream_id: a.toId, propagate_mode: 'change_all', send_notification_to_old_thread: true }), ok);
    t.same(await contents(a.from, 'test'), [`This topic was moved to #**${a.to}>test** by ${mover}.`]);
    t.same((await contents(a.to, 'test')).slice(3), [`This topic was moved here from #**${a.from}>test** by ${mover}.`]);

    const b = await prepare();
    await sendStream(s, iago, b.to, 'test', 'Always here');
    t.same(await patch(s, iago, b.ids[0]!, { stream_id: b.toId, propagate_mode: 'change_later', send_notification_to_old_thread: true }), ok);
    t.same(await contents(b.from, 'test'), [`This topic was moved to #**${b.to}>test** by ${mover}.`], 'change_later that leaves nothing moved the whole topic');
    t.same((await contents(b.to, 'test')).slice(4), [`3 messages were moved here from #**${b.from}>test** by ${mover}.`], 'into a topic that had messages');

    const c = await prepare();
    t.same(await patch(s, iago, c.ids[1]!, { topic: 'elsewhere', propagate_mode: 'change_later', send_notification_to_old_thread: true }), ok);
    t.same((await contents(c.from, 'test')).slice(1), [`2 messages were moved from this topic to #**${c.from}>elsewhere** by ${mover}.`]);
    t.same((await contents(c.from, 'elsewhere')).slice(2), [`2 messages were moved here from #**${c.from}>test** by ${mover}.`]);

    const d = await prepare();
    t.same(await patch(s, iago, d.ids[0]!, { topic: 'quiet', propagate_mode: 'change_all', send_notification_to_new_thread: false }), ok);
    t.same(await contents(d.from, 'quiet'), ['First', 'Second', 'third'], 'no notice when both are turned off (old is off by default)');
  });

  await t.test('resolving and unresolving a topic', async (t) => {
    const { from, ids } = await prepare();
    t.same(await patch(s, iago, ids[0]!, { topic: '✔ test', propagate_mode: 'change_all' }), ok);
    t.same((await contents(from, '✔ test')).slice(3), [`${mover} has marked this topic as resolved.`], 'no breadcrumb for a resolution');
    t.same(await patch(s, iago, ids[0]!, { topic: 'test', propagate_mode: 'change_all' }), ok);
    t.same((await contents(from, 'test')).slice(3), [`${mover} has marked this topic as resolved.`, `${mover} has marked this topic as unresolved.`]);
    t.same(await patch(s, iago, ids[0]!, { topic: '✔ something else', propagate_mode: 'change_all' }), ok);
    t.same((await contents(from, '✔ something else')).slice(5), [`This topic was moved here from #**${from}>test** by ${mover}.`], 'a check mark on another name is a plain rename');
  });
});

t.test('topic preferences follow a topic moved whole', async (t) => {
  const s = await shared;
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const [bob, carol, dave, erin, frank] = await Promise.all(['Bob', 'Carol', 'Dave', 'Erin', 'Frank'].map((name) => s.user(Role.MEMBER, name)));
  const from = await createChannel(s, iago, 'prefs-from', [bob!, carol!, dave!, erin!, frank!]);
  const secret = await createChannel(s, iago, 'prefs-secret', [dave!], { invite_only: true });
  const setPolicy = (u: typeof iago, topic: string, visibility_policy: number, stream_id = from) =>
    s.api('POST', '/user_topics', u, { stream_id, topic, visibility_policy });
  const policies = async (u: typeof iago) => {
    const body = (await s.api('POST', '/register', u, { fetch_event_types: ['user_topic'] })).body;
    return (body.user_topics as Array<{ stream_id: number; topic_name: string; visibility_policy: number }>)
      .map((p) => [p.stream_id, p.topic_name, p.visibility_policy]).sort();
  };
  const ids = [await sendStream(s, iago, 'prefs-from', 'test', 'one'), await sendStream(s, iago, 'prefs-from', 'test', 'two')];
  await sendStream(s, iago, 'prefs-from', 'existing', 'already here');
  await setPolicy(bob!, 'test', 3);
  await setPolicy(carol!, 'test', 1);
  await setPolicy(dave!, 'test', 3);
  await setPolicy(dave!, 'existing', 1);
  await setPolicy(erin!, 'test', 2);
  await setPolicy(frank!, 'test', 1);
  await setPolicy(frank!, 'existing', 2);

  t.same(await patch(s, iago, ids[1]!, { topic: 'partial', propagate_mode: 'change_one' }), ok);
  t.same(await policies(bob!), [[from, 'test', 3]], 'part of a topic moved: preferences stay');
  t.same(await patch(s, iago, ids[0]!, { topic: 'fresh', propagate_mode: 'change_all' }), ok);
  t.same(await policies(carol!), [[from, 'fresh', 1]], 'into a new topic, muted moves along');
  t.same(await patch(s, iago, ids[0]!, { topic: 'test', propagate_mode: 'change_all' }), ok);

  t.same(await patch(s, iago, ids[0]!, { topic: 'existing', propagate_mode: 'change_all' }), ok);
  t.same(await policies(bob!), [[from, 'existing', 3]], 'followed moves along');
  t.same(await policies(carol!), [], 'into a topic with messages, muted gives way to the inherit there');
  t.same(await policies(dave!), [[from, 'existing', 3]], 'into a topic with messages: followed wins over muted');
  t.same(await policies(erin!), [[from, 'existing', 2]], 'unmuted wins over inherit');
  t.same(await policies(frank!), [[from, 'existing', 2]], 'unmuted wins over muted');

  t.same(await patch(s, iago, ids[0]!, { stream_id: secret, propagate_mode: 'change_all' }), ok);
  t.same(await policies(bob!), [], 'moved where they cannot follow: the preference is dropped');
  t.same(await policies(dave!), [[secret, 'existing', 3]], 'a subscriber of the new channel keeps theirs');
});
