import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

// A topic link points at the topic's first message the sender can read (`…/topic/<topic>/with/<id>`), as the real
// server's do; a topic with no such message gets a plain topic link. Sends, edits and previews alike.

t.test('topic links carry the first readable message of their topic', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const subscribe = async (user: typeof alice, name: string, extra: Record<string, unknown> = {}) =>
    t.equal((await s.api('POST', '/users/me/subscriptions', user, { subscriptions: [{ name }], ...extra })).status, 200);
  await subscribe(alice, 'verona');
  await subscribe(bob, 'verona');
  const send = async (user: typeof alice, to: string, topic: string, content: string) => {
    const reply = await s.api('POST', '/messages', user, { type: 'stream', to, topic, content });
    t.equal(reply.status, 200, reply.body.msg);
    return reply.body.id as number;
  };
  const rendered = async (user: typeof alice, id: number) => (await s.api('GET', `/messages/${id}`, user, { apply_markdown: true })).body.message.content as string;
  const channelId = (await s.api('GET', '/get_stream_id', alice, { stream: 'verona' })).body.stream_id as number;
  const lunchUrl = `/#narrow/channel/${channelId}-verona/topic/lunch`;

  const first = await send(alice, 'verona', 'lunch', 'first');
  await send(alice, 'verona', 'lunch', 'second');
  const link = await send(bob, 'verona', 'other', 'see #**verona>lunch** and #**verona>LUNCH** and #**verona>empty**');
  const html = await rendered(bob, link);
  t.match(html, `href="${lunchUrl}/with/${first}">#verona &gt; lunch</a>`);
  t.match(html, `href="/#narrow/channel/${channelId}-verona/topic/LUNCH/with/${first}">#verona &gt; LUNCH</a>`, 'topics compare case-insensitively');
  t.match(html, `href="/#narrow/channel/${channelId}-verona/topic/empty">`, 'no message, no /with/');

  // A message link keeps pointing at its own message.
  t.match(await rendered(bob, await send(bob, 'verona', 'other', '#**verona>lunch@5**')), `href="${lunchUrl}/near/5"`);

  // The preview and an edit see the same.
  const preview = await s.api('POST', '/messages/render', bob, { content: '#**verona>lunch**' });
  t.match(preview.body.rendered, `${lunchUrl}/with/${first}"`);
  const later = await send(bob, 'verona', 'other', 'nothing yet');
  t.equal((await s.api('PATCH', `/messages/${later}`, bob, { content: 'now #**verona>lunch**' })).status, 200);
  t.match(await rendered(bob, later), `${lunchUrl}/with/${first}"`);
});

t.test('in a private channel with protected history, the first message the sender received', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const created = await s.api('POST', '/users/me/subscriptions', alice, {
    subscriptions: [{ name: 'secret' }],
    invite_only: true,
    history_public_to_subscribers: false,
  });
  t.equal(created.status, 200);
  const send = async (user: typeof alice, topic: string, content: string) => (await s.api('POST', '/messages', user, { type: 'stream', to: 'secret', topic, content })).body.id as number;
  const before = await send(alice, 'plans', 'before Bob');
  t.equal((await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'secret' }], principals: [bob.id] })).status, 200);
  const after = await send(alice, 'plans', 'after Bob');
  const channelId = (await s.api('GET', '/get_stream_id', alice, { stream: 'secret' })).body.stream_id as number;
  const preview = async (user: typeof alice) => (await s.api('POST', '/messages/render', user, { content: '#**secret>plans**' })).body.rendered as string;
  t.match(await preview(alice), `/topic/plans/with/${before}"`, 'the sender of the first message reads it');
  t.match(await preview(bob), `/topic/plans/with/${after}"`, 'Bob received only the later one');
  t.notMatch(await preview(bob), `/with/${before}"`);
  t.ok(channelId > 0);
});
