import t from 'tap';
import type { Test } from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendStream, subscribe } from '../helpers/channels-fixture.js';

// POST /messages by the real server's rules (found by replaying its test_message_send.py).
const shared = startTestServer(t);

async function expectError(t: Test, s: TestServer, as: TestUser, params: Record<string, unknown>, msg: string, code = 'BAD_REQUEST') {
  const r = await s.api('POST', '/messages', as, params);
  t.equal(r.status, 400, msg);
  t.equal(r.body.msg, msg);
  t.equal(r.body.code, code);
  return r;
}

async function expectSent(t: Test, s: TestServer, as: TestUser, params: Record<string, unknown>, label: string) {
  const r = await s.api('POST', '/messages', as, params);
  t.equal(r.status, 200, `${label}: ${JSON.stringify(r.body)}`);
  return r.body;
}

t.test('type, to and topic are read as the real server reads them', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const sid = await createChannel(s, alice, 'parsing', [bob]);
  const send = (p: Record<string, unknown>) => ({ type: 'stream', to: 'parsing', topic: 't', content: 'x', ...p });

  await expectError(t, s, alice, send({ type: 'invalid' }), 'Invalid type');
  await expectError(t, s, alice, send({ topic: '' }), "Topic can't be empty!");
  await expectError(t, s, alice, send({ topic: '   ' }), "Topic can't be empty!");
  await expectError(t, s, alice, send({ topic: 'Test\n\rTopic' }), 'Invalid character in topic, at position 5!');
  await expectError(t, s, alice, send({ topic: 'Test\ufffeTopic' }), 'Invalid character in topic, at position 5!');
  await expectError(t, s, alice, send({ topic: 'a\u0000b' }), 'Invalid character in topic, at position 2!');
  await expectError(t, s, alice, send({ content: '  I like null bytes \u0000 in my content' }), 'Message must not contain null bytes');
  // The topic is checked before the content.
  await expectError(t, s, alice, send({ topic: '', content: ' ' }), "Topic can't be empty!");
  await expectError(t, s, alice, send({ to: undefined }), 'Missing channel');
  await expectError(t, s, alice, send({ to: '' }), "Channel name can't be empty.");
  await expectError(t, s, alice, send({ to: '{}' }), 'Invalid data type for channel');
  await expectError(t, s, alice, send({ to: '[{}]' }), 'Invalid data type for channel');
  await expectError(t, s, alice, send({ to: '[1,2,"general"]' }), 'Expected exactly one channel');
  const missing = await expectError(t, s, alice, send({ to: `&<"'><non-existent>` }),
    "Channel '&amp;&lt;&quot;&#x27;&gt;&lt;non-existent&gt;' does not exist", 'STREAM_DOES_NOT_EXIST');
  t.equal(missing.body.stream, '&amp;&lt;&quot;&#x27;&gt;&lt;non-existent&gt;');
  await expectError(t, s, alice, send({ forged: 'true' }), 'User not authorized for this query');

  for (const to of ['"parsing"', `[${sid}]`, String(sid), '["parsing"]', ' parsing ']) await expectSent(t, s, alice, send({ to }), `to=${to}`);
  await expectSent(t, s, alice, send({ type: 'channel' }), 'type channel');
  const long = await expectSent(t, s, alice, send({ topic: 'A'.repeat(61) }), 'long topic');
  t.equal((await s.api('GET', `/messages/${long.id}`, alice)).body.message.subject, `${'A'.repeat(57)}...`);

  const dm = (to: unknown) => ({ type: 'direct', to, content: 'x' });
  await expectError(t, s, alice, dm(''), 'Message must have recipients');
  await expectError(t, s, alice, dm('[]'), 'Message must have recipients');
  await expectError(t, s, alice, dm('{"color":"red"}'), 'Invalid data type for recipients');
  await expectError(t, s, alice, dm('[{}]'), 'Invalid data type for recipients');
  await expectError(t, s, alice, dm(String(bob.id)), 'Invalid data type for recipients');
  await expectError(t, s, alice, dm(JSON.stringify([bob.email, 3])), 'Recipient lists may contain emails or user IDs, but not both.');
  await expectError(t, s, alice, dm(JSON.stringify([bob.id, bob.email])), 'Recipient lists may contain emails or user IDs, but not both.');
  const forms = [
    JSON.stringify([` ${bob.email} `, '   ', bob.email, carol.email]),
    JSON.stringify(`${bob.email},${carol.email}`),
    `${bob.email}, ${carol.email}`,
    JSON.stringify([bob.id, carol.id, bob.id]),
  ];
  const group = [alice.id, bob.id, carol.id].sort((a, b) => a - b);
  for (const to of forms) {
    const sent = await expectSent(t, s, alice, dm(to), `dm to=${to}`);
    const got = await s.api('GET', `/messages/${sent.id}`, alice);
    t.same(got.body.message.display_recipient.map((u: { id: number }) => u.id), group, 'one group, duplicates and blanks dropped');
  }
});

t.test('channel posting policies, guests, new members and bots', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const mod = await s.user(Role.MODERATOR, 'Mod');
  const member = await s.user(Role.MEMBER, 'Member');
  const guest = await s.user(Role.GUEST, 'Guest');
  const adminBot = await s.user(Role.MEMBER, 'AdminBot', { bot_type: 1, bot_owner_id: admin.id });
  const memberBot = await s.user(Role.MEMBER, 'MemberBot', { bot_type: 1, bot_owner_id: member.id });
  const sid = await createChannel(s, admin, 'policies', [mod, member, guest, adminBot, memberBot]);
  const post = (as: TestUser) => s.api('POST', '/messages', as, { type: 'stream', to: 'policies', topic: 't', content: 'x' });
  const expectFrom = async (policy: number, results: Array<[TestUser, string | null]>) => {
    const set = await s.api('PATCH', `/streams/${sid}`, admin, { stream_post_policy: policy });
    t.equal(set.status, 200);
    for (const [user, msg] of results) {
      const r = await post(user);
      if (msg === null) t.equal(r.status, 200, `policy ${policy}: allowed ${JSON.stringify(r.body)}`);
      else t.same([r.status, r.body.msg], [400, msg], `policy ${policy}: ${msg}`);
    }
  };
  const admins = 'Only organization administrators can send to this channel.';
  const mods = 'Only organization administrators and moderators can send to this channel.';
  // A bot may post where its owner may.
  await expectFrom(2, [[admin, null], [adminBot, null], [mod, admins], [member, admins], [memberBot, admins], [guest, admins]]);
  await expectFrom(4, [[admin, null], [adminBot, null], [mod, null], [member, mods], [memberBot, mods], [guest, mods]]);

  // New members: joined fewer days ago than the waiting period (moderators never count as new).
  t.equal((await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 10 })).status, 200);
  await expectFrom(3, [[admin, null], [mod, null], [member, 'New members cannot send to this channel.'],
    [memberBot, 'New members cannot send to this channel.'], [guest, 'Guests cannot send to this channel.']]);
  t.equal((await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 0 })).status, 200);
  await expectFrom(3, [[member, null], [memberBot, null], [guest, 'Guests cannot send to this channel.']]);
  await s.api('PATCH', `/streams/${sid}`, admin, { stream_post_policy: 1 });

  // Guests post only where subscribed; members to any public channel.
  await createChannel(s, admin, 'policies-open', []);
  await expectError(t, s, guest, { type: 'stream', to: 'policies-open', topic: 't', content: 'x' }, "Not authorized to send to channel 'policies-open'");
  await expectSent(t, s, member, { type: 'stream', to: 'policies-open', topic: 't', content: 'x' }, 'member to a public channel');

  // A bot may post to a private channel its owner is subscribed to.
  await createChannel(s, admin, 'policies-secret', [], { invite_only: true });
  const toSecret = { type: 'stream', to: 'policies-secret', topic: 't', content: 'x' };
  await expectError(t, s, memberBot, toSecret, "Not authorized to send to channel 'policies-secret'");
  await subscribe(s, admin, 'policies-secret', [member]);
  await expectSent(t, s, memberBot, toSecret, 'bot of a subscriber');
});

t.test('wildcard mentions in large channels and topics follow wildcard_mention_policy', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'WAdmin');
  const mod = await s.user(Role.MODERATOR, 'WMod');
  const member = await s.user(Role.MEMBER, 'WMember');
  const guest = await s.user(Role.GUEST, 'WGuest');
  const crowd: TestUser[] = [];
  for (let i = 0; i < 12; i++) crowd.push(await s.user(Role.MEMBER, `Crowd${i}`));
  // 15 subscribers: small enough for anyone.
  await createChannel(s, admin, 'wild', [mod, member, guest, ...crowd.slice(0, 11)]);
  const setPolicy = async (policy: number) => t.equal((await s.api('PATCH', '/realm', s.owner, { wildcard_mention_policy: policy })).status, 200);
  const all = (as: TestUser) => s.api('POST', '/messages', as, { type: 'stream', to: 'wild', topic: 'w', content: '@**all** hello' });
  await setPolicy(6);
  t.equal((await all(admin)).status, 200, 'no limit at 15 subscribers');
  await subscribe(s, admin, 'wild', [crowd[11]!]);
  const refused = await all(admin);
  t.same([refused.status, refused.body.code, refused.body.msg],
    [400, 'STREAM_WILDCARD_MENTION_NOT_ALLOWED', 'You do not have permission to use channel wildcard mentions in this channel.']);
  const allowed = async (policy: number, users: Array<[TestUser, boolean]>) => {
    await setPolicy(policy);
    for (const [user, ok] of users) t.equal((await all(user)).status, ok ? 200 : 400, `policy ${policy}`);
  };
  await allowed(1, [[guest, true]]);
  await allowed(2, [[guest, false], [member, true]]);
  await allowed(5, [[mod, false], [admin, true]]);
  await allowed(7, [[member, false], [mod, true], [admin, true]]);
  await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 10 });
  await allowed(3, [[member, false], [mod, true], [admin, true]]);
  await s.api('PATCH', '/realm', s.owner, { waiting_period_threshold: 0 });
  await allowed(3, [[member, true], [guest, false]]);

  // @**topic**: counted by the topic's participants (senders and reactors), the sender included.
  await setPolicy(6);
  const topic = (as: TestUser) => s.api('POST', '/messages', as, { type: 'stream', to: 'wild', topic: 'crowded', content: '@**topic** hello' });
  t.equal((await topic(admin)).status, 200, 'a topic with one participant');
  for (const user of [...crowd.slice(0, 11), member, mod, guest]) await sendStream(s, user, 'wild', 'crowded', 'here');
  t.equal((await topic(admin)).status, 200, '15 participants');
  await sendStream(s, crowd[11]!, 'wild', 'crowded', 'here');
  const busy = await topic(admin);
  t.same([busy.status, busy.body.code, busy.body.msg],
    [400, 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED', 'You do not have permission to use topic wildcard mentions in this topic.']);
  await setPolicy(5);
});

t.test('direct messages when the organization disables them', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'DAlice');
  const bob = await s.user(Role.MEMBER, 'DBob');
  const bot = await s.user(Role.MEMBER, 'DBot', { bot_type: 1, bot_owner_id: alice.id });
  t.equal((await s.api('PATCH', '/realm', s.owner, { private_message_policy: 2 })).status, 200);
  t.teardown(() => s.api('PATCH', '/realm', s.owner, { private_message_policy: 1 }).then(() => undefined));
  const dm = (to: TestUser[]) => ({ type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content: 'x' });
  await expectError(t, s, alice, dm([bob]), 'Direct messages are disabled in this organization.');
  await expectError(t, s, alice, dm([bob, bot]), 'Direct messages are disabled in this organization.');
  await expectSent(t, s, alice, dm([alice]), 'to oneself');
  await expectSent(t, s, alice, dm([bot]), 'to a bot');
  await expectSent(t, s, bot, dm([bob]), 'from a bot');
});

t.test('sending may follow or unmute the topic for its sender', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'FAlice');
  const bob = await s.user(Role.MEMBER, 'FBob');
  const bot = await s.user(Role.MEMBER, 'FBot', { bot_type: 1, bot_owner_id: alice.id });
  const sid = await createChannel(s, alice, 'follow', [bob, bot]);
  const register = { event_types: ['user_topic'], fetch_event_types: ['user_topic'] };
  const post = (as: TestUser, topic: string) => s.api('POST', '/messages', as, { type: 'stream', to: 'follow', topic, content: 'x' });

  // By default a user follows the topics they start.
  let first: any;
  const events = await verifyAction(t, s, alice, async () => { first = await post(alice, 'started'); }, { register });
  t.equal(first.body.automatic_new_visibility_policy, 3);
  t.match(events, [{ type: 'user_topic', stream_id: sid, topic_name: 'started', visibility_policy: 3 }]);
  const again = await post(alice, 'started');
  t.notOk('automatic_new_visibility_policy' in again.body, 'already followed');
  const joined = await post(bob, 'started');
  t.notOk('automatic_new_visibility_policy' in joined.body, 'joining a topic is not starting it');
  t.notOk('automatic_new_visibility_policy' in (await post(bot, 'bot topic')).body, 'bots never follow');

  // "Topics the user sends a message to" follows any topic.
  await s.api('PATCH', '/settings', bob, { automatically_follow_topics_policy: 2 });
  t.equal((await post(bob, 'started')).body.automatic_new_visibility_policy, 3);

  // In a muted channel, sending may unmute the topic instead.
  await s.api('PATCH', '/settings', bob, { automatically_follow_topics_policy: 4, automatically_unmute_topics_in_muted_streams_policy: 2 });
  await s.api('POST', '/users/me/subscriptions/properties', bob, { subscription_data: [{ stream_id: sid, property: 'is_muted', value: true }] });
  t.equal((await post(bob, 'quiet')).body.automatic_new_visibility_policy, 2);
  t.notOk('automatic_new_visibility_policy' in (await post(bob, 'quiet')).body, 'already unmuted');
  await s.api('PATCH', '/settings', bob, { automatically_unmute_topics_in_muted_streams_policy: 4 });
  t.notOk('automatic_new_visibility_policy' in (await post(bob, 'other')).body, 'never');

  // Mentioned by name, a human follows the topic (unless they muted it or turned the setting off).
  const carol = await s.user(Role.MEMBER, 'FCarol');
  const dave = await s.user(Role.MEMBER, 'FDave');
  await subscribe(s, alice, 'follow', [carol, dave]);
  await s.api('PATCH', '/settings', dave, { automatically_follow_topics_where_mentioned: false });
  const mentions = await verifyAction(t, s, carol, () => sendStream(s, alice, 'follow', 'mentions', `@**${'FCarol'}** @**${'FDave'}** @**FBot**`), { register });
  t.match(mentions, [{ type: 'user_topic', stream_id: sid, topic_name: 'mentions', visibility_policy: 3 }]);
  const topics = (await s.api('POST', '/register', dave, { fetch_event_types: ['user_topic'] })).body.user_topics;
  t.same(topics.filter((x: { topic_name: string }) => x.topic_name === 'mentions'), [], 'the setting off: no follow');
  await s.api('POST', '/user_topics', carol, { stream_id: sid, topic: 'muted here', visibility_policy: 1 });
  await sendStream(s, alice, 'follow', 'muted here', '@**FCarol**');
  const carolTopics = (await s.api('POST', '/register', carol, { fetch_event_types: ['user_topic'] })).body.user_topics;
  t.match(carolTopics.filter((x: { topic_name: string }) => x.topic_name === 'muted here'), [{ visibility_policy: 1 }], 'muting wins');
});

t.test('local_id comes back only to the queue that sent it, and only to its sender', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'LAlice');
  const bob = await s.user(Role.MEMBER, 'LBob');
  await createChannel(s, alice, 'echo', [bob]);
  const queue = async (u: TestUser) => (await s.api('POST', '/register', u, { event_types: ['message'] })).body.queue_id as string;
  const [sending, other, bobs] = [await queue(alice), await queue(alice), await queue(bob)];
  const sent = await expectSent(t, s, alice, { type: 'stream', to: 'echo', topic: 't', content: 'hi', queue_id: sending, local_id: '100.01' }, 'echoed');
  const foreign = await expectSent(t, s, alice, { type: 'stream', to: 'echo', topic: 't', content: 'hi', queue_id: bobs, local_id: '7' }, 'foreign queue');
  const events = async (u: TestUser, q: string) => (await s.api('GET', '/events', u, { queue_id: q, last_event_id: -1, dont_block: true })).body.events
    .filter((e: { type: string }) => e.type === 'message')
    .map((e: { message: { id: number }; local_message_id?: string }) => [e.message.id, e.local_message_id ?? null]);
  t.same(await events(alice, sending), [[sent.id, '100.01'], [foreign.id, null]]);
  t.same(await events(alice, other), [[sent.id, null], [foreign.id, null]]);
  t.same(await events(bob, bobs), [[sent.id, null], [foreign.id, null]], "another user's queue id is not the sender's queue");
});

t.test('mandatory topics refuse "(no topic)"', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'MAlice');
  await createChannel(s, alice, 'mandatory', []);
  t.equal((await s.api('PATCH', '/realm', s.owner, { mandatory_topics: true })).status, 200);
  t.teardown(() => s.api('PATCH', '/realm', s.owner, { mandatory_topics: false }).then(() => undefined));
  await expectError(t, s, alice, { type: 'stream', to: 'mandatory', topic: '(no topic)', content: 'x' }, 'Topics are required in this organization');
  await expectSent(t, s, alice, { type: 'stream', to: 'mandatory', topic: 'a topic', content: 'x' }, 'a real topic');
});

t.test('a system group may not be mentioned (its can_mention_group is role:nobody); silently it may', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.ADMINISTRATOR, 'GAlice');
  await createChannel(s, alice, 'groups', []);
  const send = (content: string) => ({ type: 'stream', to: 'groups', topic: 't', content });
  await expectError(t, s, alice, send('hi @*role:members*'),
    "You are not allowed to mention user group 'role:members'. You must be a member of 'role:nobody' to mention this group.");
  await expectSent(t, s, alice, send('hi @_*role:members*'), 'silent mention');
  const group = await s.api('POST', '/user_groups/create', alice, { name: 'helpers', description: 'd', members: [alice.id] });
  t.equal(group.status, 200);
  await expectSent(t, s, alice, send('hi @*helpers*'), 'a user group: everyone may mention it');
});
