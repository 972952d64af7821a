import t from 'tap';
import { startTestServer, Role, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

// Reacting changes what others see of a message, so it needs reading rights now, as the real server's check for
// changing a message does: having once received a message is not enough.

t.test('who may react: readers now, not everyone who once received the message', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const guest = await s.user(Role.GUEST, 'Guest');
  const channelId = async (name: string) => (await s.api('GET', '/get_stream_id', alice, { stream: name })).body.stream_id as number;
  const join = (user: TestUser, name: string, extra: Record<string, unknown> = {}) => s.api('POST', '/users/me/subscriptions', user, { subscriptions: [{ name }], ...extra });
  const add = async (name: string, users: TestUser[]) => {
    const r = await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name }], principals: users.map((u) => u.id) });
    t.equal(r.status, 200);
  };
  const leave = (user: TestUser, name: string) => s.api('DELETE', '/users/me/subscriptions', user, { subscriptions: [name] });
  const send = async (to: string) => (await s.api('POST', '/messages', alice, { type: 'stream', to, topic: 't', content: 'hi' })).body.id as number;
  const react = (user: TestUser, id: number) => s.api('POST', `/messages/${id}/reactions`, user, { emoji_name: 'smile' });
  const refused = { status: 400, body: { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' } };

  t.equal((await join(alice, 'protected', { invite_only: true, history_public_to_subscribers: false })).status, 200);
  await add('protected', [bob]);
  const secret = await send('protected');
  t.equal((await react(bob, secret)).status, 200, 'a subscriber who received it');
  await leave(bob, 'protected');
  t.match(await react(bob, secret), refused, 'after leaving a private channel');
  t.match(await s.api('DELETE', `/messages/${secret}/reactions`, bob, { emoji_name: 'smile' }), refused, 'removing too');

  t.equal((await join(alice, 'shared', { invite_only: true, history_public_to_subscribers: true })).status, 200);
  await add('shared', [bob]);
  const shared = await send('shared');
  await leave(bob, 'shared');
  t.match(await react(bob, shared), refused, 'shared history: only subscribers now');
  await add('shared', [carol]);
  t.equal((await react(carol, shared)).status, 200, 'a later subscriber of shared history');

  t.equal((await join(alice, 'open')).status, 200);
  await add('open', [guest]);
  const open = await send('open');
  t.equal((await react(carol, open)).status, 200, 'a public channel: any member, subscribed or not');
  await leave(guest, 'open');
  t.match(await react(guest, open), refused, 'a guest who left a public channel');

  const archived = await send('open');
  t.equal((await s.api('DELETE', `/streams/${await channelId('open')}`, s.owner)).status, 200);
  t.match(await react(alice, archived), refused, 'nothing in an archived channel, not even for its sender');

  // A message id in the path is digits, or there is no such route.
  for (const path of ['/messages/-1/reactions', '/messages//reactions', '/messages/abc/reactions']) {
    t.equal((await s.api('POST', path, alice, { emoji_name: 'smile' })).status, 404, path);
  }
});

t.test('reaction events reach the readers of the message now', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const register = { register: { event_types: ['reaction'] } };
  t.equal((await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'club' }], invite_only: true, history_public_to_subscribers: false })).status, 200);
  const old = (await s.api('POST', '/messages', alice, { type: 'stream', to: 'club', topic: 't', content: 'before Bob' })).body.id as number;
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'club' }], principals: [bob.id] });
  const react = (emoji_name: string) => s.api('POST', `/messages/${old}/reactions`, alice, { emoji_name });
  t.same(await verifyAction(t, s, bob, () => react('smile'), register), [], 'protected history: Bob never received it');
  // Shared history: a later subscriber reads the old message, and hears of its reactions.
  t.equal((await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'open club' }], invite_only: true, history_public_to_subscribers: true })).status, 200);
  const early = (await s.api('POST', '/messages', alice, { type: 'stream', to: 'open club', topic: 't', content: 'before Bob' })).body.id as number;
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'open club' }], principals: [bob.id] });
  const heard = await verifyAction(t, s, bob, () => s.api('POST', `/messages/${early}/reactions`, alice, { emoji_name: 'heart' }), register);
  t.match(heard, [{ type: 'reaction', op: 'add', message_id: early, emoji_name: 'heart' }], 'a later subscriber of shared history hears of it');
  t.same(await verifyAction(t, s, carol, () => react('tada'), register), [], 'a member who never received it and is not subscribed does not');
});
