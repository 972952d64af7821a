/**
 * Leak test (issue 9): private-channel and direct-message content never reaches an outsider through
 * any read (every narrow kind, search, single message, matches_narrow, history), render, event,
 * register state, audit or error output. Every secret is a distinct token; an outsider's response
 * may contain a token only if the outsider's own request contained it.
 */
import t from 'tap';
import { startTestServer, Role, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream, sendDm } from '../helpers/channels-fixture.js';

t.setTimeout(170_000);

const TOKENS = {
  name: 'ZQNAMEQZ',
  description: 'ZQDESCQZ',
  topic: 'ZQTOPICQZ',
  content: 'ZQCONTENTQZ',
  edited: 'ZQEDITEDQZ',
  newTopic: 'ZQMOVEDQZ',
  newName: 'ZQRENAMEDQZ',
  newDescription: 'ZQREDESCQZ',
  dm: 'ZQDIRECTQZ',
  dmEdited: 'ZQDMEDITQZ',
  earlier: 'ZQEARLIERQZ',
  link: 'zqlinkqz',
};
const ALL_TOKENS = Object.values(TOKENS);

function leaked(request: string, response: string): string[] {
  const req = request.toLowerCase();
  const res = response.toLowerCase();
  return ALL_TOKENS.filter((token) => !req.includes(token.toLowerCase()) && res.includes(token.toLowerCase()));
}

interface Probe {
  method: string;
  path: string;
  params?: Record<string, unknown>;
}

t.test('private content never reaches an outsider', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const guest = await s.user(Role.GUEST, 'Gus');
  const moderator = await s.user(Role.MODERATOR, 'Moe');
  const outsiders: Array<[string, TestUser]> = [['member', eve], ['guest', guest], ['moderator', moderator]];

  const pub = await createChannel(s, s.owner, 'open square', [alice, bob, eve, guest, moderator]);
  await sendStream(s, alice, pub, 'public topic', 'nothing to hide here');

  // Each outsider registers before the secrets are written, so every later event passes its filter.
  const queues = new Map<TestUser, string>();
  for (const [, who] of outsiders) {
    const r = await s.api('POST', '/register', who, {});
    t.equal(r.status, 200);
    queues.set(who, r.body.queue_id);
  }

  const priv = await createChannel(s, alice, TOKENS.name, [bob], { invite_only: true, history_public_to_subscribers: false, description: `about ${TOKENS.description}` });
  const privMsg = await sendStream(s, alice, priv, TOKENS.topic, `${TOKENS.content} launch codes https://${TOKENS.link}.example.com @**Bob**`);
  const privMsg2 = await sendStream(s, bob, priv, TOKENS.topic, `second ${TOKENS.content} :smile:`);
  const dmMsg = await sendDm(s, alice, [bob], `${TOKENS.dm} meet at noon`);
  const groupDm = await sendDm(s, alice, [bob, s.owner], `${TOKENS.dm} group plans`);
  await s.api('POST', `/messages/${privMsg}/reactions`, bob, { emoji_name: 'smile' });
  await s.api('POST', `/messages/${dmMsg}/reactions`, bob, { emoji_name: 'smile' });
  t.equal((await s.api('PATCH', `/messages/${privMsg2}`, bob, { content: `${TOKENS.edited} changed` })).status, 200, 'edit in the private channel');
  t.equal((await s.api('PATCH', `/messages/${privMsg}`, alice, { topic: TOKENS.newTopic, propagate_mode: 'change_one' })).status, 200, 'topic move in the private channel');
  t.equal((await s.api('PATCH', `/messages/${dmMsg}`, alice, { content: `${TOKENS.dmEdited} changed` })).status, 200, 'edit of a direct message');
  t.equal((await s.api('PATCH', `/streams/${priv}`, s.owner, { description: `now ${TOKENS.newDescription}` })).status, 200, 'private channel description change');
  const renamed = await s.api('PATCH', `/streams/${priv}`, s.owner, { new_name: TOKENS.newName });
  t.equal(renamed.status, 200, 'private channel rename');
  await s.api('POST', '/typing', alice, { op: 'start', type: 'stream', stream_id: priv, topic: TOKENS.newTopic });
  await s.api('POST', '/typing', alice, { op: 'start', type: 'direct', to: [bob.id] });
  await s.api('POST', '/messages/flags', bob, { messages: [privMsg, dmMsg], op: 'add', flag: 'starred' });
  const doomed = await sendStream(s, alice, priv, TOKENS.topic, `${TOKENS.content} to be deleted`);
  await s.api('DELETE', `/messages/${doomed}`, s.owner);
  const privIds = [privMsg, privMsg2, dmMsg, groupDm, doomed];

  // The insiders do see it (the test would prove nothing if nothing had been written).
  const insider = await s.api('GET', `/messages/${privMsg2}`, bob);
  t.equal(insider.status, 200);
  t.match(JSON.stringify(insider.body), TOKENS.edited, 'an insider reads the edited private message');
  const insiderDm = await s.api('GET', `/messages/${dmMsg}`, bob);
  t.match(JSON.stringify(insiderDm.body), TOKENS.dmEdited, 'a participant reads the direct message');

  const narrows: unknown[] = [
    [],
    [{ operator: 'channel', operand: TOKENS.newName }],
    [{ operator: 'channel', operand: TOKENS.name }],
    [{ operator: 'channel', operand: priv }],
    [{ operator: 'stream', operand: priv }],
    [{ operator: 'channels', operand: 'public' }],
    [{ operator: 'streams', operand: 'public' }],
    [{ operator: 'channels', operand: 'web-public' }],
    [{ operator: 'topic', operand: TOKENS.newTopic }],
    [{ operator: 'channel', operand: priv }, { operator: 'topic', operand: TOKENS.topic }],
    [{ operator: 'search', operand: 'launch' }],
    [{ operator: 'search', operand: 'codes' }],
    [{ operator: 'search', operand: 'noon' }],
    [{ operator: 'search', operand: 'changed' }],
    [{ operator: 'sender', operand: alice.id }],
    [{ operator: 'sender', operand: alice.email }],
    [{ operator: 'sender', operand: bob.id }],
    [{ operator: 'dm', operand: [alice.id, bob.id] }],
    [{ operator: 'dm', operand: [alice.id] }],
    [{ operator: 'dm', operand: alice.email }],
    [{ operator: 'pm-with', operand: alice.email }],
    [{ operator: 'dm-including', operand: alice.id }],
    [{ operator: 'group-pm-with', operand: alice.email }],
    [{ operator: 'is', operand: 'dm' }],
    [{ operator: 'is', operand: 'private' }],
    [{ operator: 'is', operand: 'starred' }],
    [{ operator: 'is', operand: 'mentioned' }],
    [{ operator: 'is', operand: 'alerted' }],
    [{ operator: 'is', operand: 'unread' }],
    [{ operator: 'is', operand: 'resolved' }],
    [{ operator: 'is', operand: 'followed' }],
    [{ operator: 'is', operand: 'muted' }],
    [{ operator: 'in', operand: 'all' }],
    [{ operator: 'in', operand: 'home' }],
    [{ operator: 'has', operand: 'link' }],
    [{ operator: 'has', operand: 'reaction' }],
    [{ operator: 'id', operand: privMsg }],
    [{ operator: 'id', operand: dmMsg }],
    [{ operator: 'near', operand: privMsg }],
    [{ operator: 'channel', operand: 'open square', negated: true }],
    [{ operator: 'sender', operand: eve.id, negated: true }],
    [['channel', String(priv)]],
  ];

  const probes: Probe[] = [];
  for (const narrow of narrows) {
    probes.push({ method: 'GET', path: '/messages', params: { anchor: 'newest', num_before: 1000, num_after: 0, narrow } });
    probes.push({ method: 'GET', path: '/messages', params: { anchor: 'oldest', num_before: 0, num_after: 1000, narrow, apply_markdown: false } });
  }
  for (const id of privIds) {
    probes.push(
      { method: 'GET', path: '/messages', params: { anchor: id, num_before: 5, num_after: 5 } },
      { method: 'GET', path: `/messages/${id}` },
      { method: 'GET', path: `/messages/${id}`, params: { apply_markdown: false } },
      { method: 'GET', path: `/messages/${id}/history` },
      { method: 'PATCH', path: `/messages/${id}`, params: { content: 'overwrite' } },
      { method: 'PATCH', path: `/messages/${id}`, params: { topic: 'moved' } },
      { method: 'DELETE', path: `/messages/${id}` },
      { method: 'POST', path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } },
      { method: 'DELETE', path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } },
      { method: 'POST', path: '/messages/flags', params: { messages: [id], op: 'add', flag: 'starred' } },
      { method: 'GET', path: `/audit/messages/${id}` },
    );
  }
  probes.push(
    { method: 'GET', path: '/messages/matches_narrow', params: { msg_ids: privIds, narrow: [] } },
    { method: 'GET', path: '/messages/matches_narrow', params: { msg_ids: privIds, narrow: [{ operator: 'search', operand: 'launch' }] } },
    { method: 'POST', path: '/messages/flags/narrow', params: { anchor: 'oldest', num_before: 0, num_after: 1000, narrow: [], op: 'add', flag: 'read' } },
    { method: 'POST', path: '/messages/render', params: { content: `#**${TOKENS.name}** #**${TOKENS.newName}>${TOKENS.newTopic}** [link](#narrow/stream/${priv})` } },
    { method: 'POST', path: '/messages', params: { type: 'stream', to: priv, topic: 'x', content: 'let me in' } },
    { method: 'POST', path: '/typing', params: { op: 'start', type: 'stream', stream_id: priv, topic: 'x' } },
    { method: 'GET', path: '/streams' },
    { method: 'GET', path: '/streams', params: { include_all_active: true } },
    { method: 'GET', path: `/streams/${priv}` },
    { method: 'GET', path: `/streams/${priv}/members` },
    { method: 'GET', path: `/users/me/${priv}/topics` },
    { method: 'GET', path: `/users/${alice.id}/subscriptions/${priv}` },
    { method: 'GET', path: '/get_stream_id', params: { stream: TOKENS.name } },
    { method: 'GET', path: '/users/me/subscriptions', params: { include_subscribers: true } },
    { method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: TOKENS.newName }] } },
    { method: 'PATCH', path: `/streams/${priv}`, params: { description: 'hijack' } },
    { method: 'POST', path: '/user_topics', params: { stream_id: priv, topic: TOKENS.newTopic, visibility_policy: 1 } },
    { method: 'POST', path: '/mark_stream_as_read', params: { stream_id: priv } },
    { method: 'POST', path: '/mark_topic_as_read', params: { stream_id: priv, topic_name: TOKENS.newTopic } },
    { method: 'GET', path: '/audit/events', params: { limit: 1000 } },
    { method: 'GET', path: '/users' },
    { method: 'GET', path: `/users/${alice.id}` },
    { method: 'GET', path: '/drafts' },
    { method: 'GET', path: '/attachments' },
    { method: 'POST', path: '/register', params: {} },
    { method: 'POST', path: '/register', params: { narrow: [['channel', TOKENS.newName]] } },
  );

  const leaks: string[] = [];
  let count = 0;
  for (const [role, who] of outsiders) {
    for (const probe of probes) {
      const r = await s.api(probe.method, probe.path, who, probe.params);
      count += 1;
      if (r.status >= 500) leaks.push(`${role} ${probe.method} ${probe.path}: status ${r.status}`);
      const found = leaked(`${probe.path} ${JSON.stringify(probe.params ?? {})}`, JSON.stringify(r.body));
      if (found.length > 0) leaks.push(`${role} ${probe.method} ${probe.path} ${JSON.stringify(probe.params ?? {}).slice(0, 120)} → ${r.status} reveals ${found.join(', ')}`);
    }
    // Everything that happened since registration, as the outsider's queue delivers it.
    const events = await s.api('GET', '/events', who, { queue_id: queues.get(who), last_event_id: -1, dont_block: true });
    t.equal(events.status, 200, `${role}'s queue reads`);
    const found = leaked('', JSON.stringify(events.body));
    if (found.length > 0) leaks.push(`${role} events reveal ${found.join(', ')}: ${JSON.stringify(events.body).slice(0, 400)}`);
  }
  t.comment(`${count} outsider requests over ${narrows.length} narrows and ${privIds.length} private messages`);
  t.same(leaks, [], 'no private token in any outsider response or event');

  // The outsider's access to the private message is refused with the documented error.
  const single = await s.api('GET', `/messages/${privMsg}`, eve);
  t.equal(single.status, 400);
  t.equal(single.body.msg, 'Invalid message(s)');
});

t.test('protected history: a late subscriber sees nothing from before they joined', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const priv = await createChannel(s, alice, 'vault', [], { invite_only: true, history_public_to_subscribers: false });
  const before = await sendStream(s, alice, priv, 'old', `${TOKENS.earlier} from before`);
  const r = await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'vault' }], principals: [carol.id] });
  t.equal(r.status, 200);
  const after = await sendStream(s, alice, priv, 'new', 'after carol joined');

  const leaks: string[] = [];
  const probes: Probe[] = [
    { method: 'GET', path: '/messages', params: { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: priv }] } },
    { method: 'GET', path: '/messages', params: { anchor: 'newest', num_before: 100, num_after: 0, narrow: [] } },
    { method: 'GET', path: '/messages', params: { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'search', operand: 'before' }] } },
    { method: 'GET', path: '/messages', params: { anchor: before, num_before: 5, num_after: 5 } },
    { method: 'GET', path: `/messages/${before}` },
    { method: 'GET', path: `/messages/${before}/history` },
    { method: 'GET', path: '/messages/matches_narrow', params: { msg_ids: [before, after], narrow: [] } },
    { method: 'GET', path: `/users/me/${priv}/topics` },
    { method: 'POST', path: `/messages/${before}/reactions`, params: { emoji_name: 'smile' } },
    { method: 'POST', path: '/register', params: {} },
  ];
  for (const probe of probes) {
    const res = await s.api(probe.method, probe.path, carol, probe.params);
    const found = leaked(JSON.stringify(probe.params ?? {}), JSON.stringify(res.body));
    if (found.length > 0) leaks.push(`${probe.method} ${probe.path} reveals ${found.join(', ')}`);
  }
  t.same(leaks, [], 'nothing from before the subscription');
  const visible = await s.api('GET', '/messages', carol, { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: priv }] });
  t.same(visible.body.messages.map((m: { id: number }) => m.id), [after], 'only the message sent after joining');
});

