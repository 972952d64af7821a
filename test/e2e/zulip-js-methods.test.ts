/**
 * Every method of the real zulip-js client (issue 18 item 5), over a real port, as its users call
 * them. The two whose endpoints the real server no longer has at this feature level (the pointer,
 * removed at level 1; GET /realm/filters, replaced by GET /realm/linkifiers) must fail as cleanly
 * as there: a JSON error, never a crash.
 */
import t from 'tap';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { startTestServer, Role } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const zulipInit = require('zulip-js') as (config: Record<string, string>) => Promise<any>;

t.test('zulip-js: every method', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  await s.fastify.listen({ host: '127.0.0.1', port: 0 });
  const realm = `http://127.0.0.1:${(s.fastify.server.address() as AddressInfo).port}`;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin Client');
  const peer = await s.user(Role.MEMBER, 'Peer');
  const client = await zulipInit({ username: admin.email, apiKey: admin.apiKey, realm });

  // accounts.retrieve: zulip-js fetches the API key itself when given a password.
  const created = await client.users.create({ email: 'pw@example.com', password: 'correct horse battery', full_name: 'Password User' });
  t.equal(created.result, 'success', JSON.stringify(created));
  const byPassword = await zulipInit({ username: 'pw@example.com', password: 'correct horse battery', realm });
  const fetched = await byPassword.accounts.retrieve();
  t.equal(fetched.result, 'success', 'accounts.retrieve (POST /fetch_api_key)');
  t.equal(fetched.email, 'pw@example.com');
  t.equal((await byPassword.users.me.getProfile()).email, 'pw@example.com', 'the fetched key works');

  t.equal((await client.server.settings()).result, 'success', 'server.settings');
  t.ok((await client.users.retrieve()).members.some((m: { user_id: number }) => m.user_id === peer.id), 'users.retrieve');
  t.equal((await client.users.me.getProfile()).user_id, admin.id, 'users.me.getProfile');
  t.ok('emoji' in (await client.emojis.retrieve()), 'emojis.retrieve (GET /realm/emoji)');

  const subscribed = await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'js client' }]), principals: JSON.stringify([admin.id, peer.id]) });
  t.equal(subscribed.result, 'success', 'users.me.subscriptions.add');
  const streamId = (await client.streams.getStreamId({ stream: 'js client' })).stream_id as number;
  t.type(streamId, 'number', 'streams.getStreamId');
  t.ok((await client.streams.retrieve()).streams.some((c: { stream_id: number }) => c.stream_id === streamId), 'streams.retrieve');
  t.ok((await client.streams.subscriptions.retrieve()).subscriptions.some((c: { stream_id: number }) => c.stream_id === streamId), 'streams.subscriptions.retrieve');

  const sent = await client.messages.send({ type: 'stream', to: 'js client', topic: 'methods', content: 'first **draft**' });
  t.equal(sent.result, 'success', 'messages.send');
  const id = sent.id as number;
  t.equal((await client.messages.render({ content: '**bold**' })).rendered, '<p><strong>bold</strong></p>', 'messages.render');
  t.equal((await client.messages.update({ message_id: id, content: 'final text' })).result, 'success', 'messages.update');
  const single = await client.messages.getById({ message_id: id });
  t.equal(single.message?.content ?? single.raw_content, single.message ? '<p>final text</p>' : 'final text', 'messages.getById');
  const history = await client.messages.getHistoryById({ message_id: id });
  t.equal(history.message_history.length, 2, 'messages.getHistoryById: the original and the edit');
  const page = await client.messages.retrieve({ anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'stream', operand: 'js client' }] });
  t.ok(page.messages.some((m: { id: number }) => m.id === id), 'messages.retrieve');
  t.ok((await client.streams.topics.retrieve({ stream_id: streamId })).topics.some((x: { name: string }) => x.name === 'methods'), 'streams.topics.retrieve');

  t.equal((await client.messages.flags.add({ messages: [id], flag: 'starred' })).result, 'success', 'messages.flags.add');
  t.equal((await client.messages.flags.remove({ messages: [id], flag: 'starred' })).result, 'success', 'messages.flags.remove');
  t.equal((await client.reactions.add({ message_id: id, emoji_name: 'octopus' })).result, 'success', 'reactions.add');
  t.equal((await client.reactions.remove({ message_id: id, emoji_name: 'octopus' })).result, 'success', 'reactions.remove');
  await client.reactions.add({ message_id: id, emoji_name: 'octopus' });
  t.equal((await client.messages.deleteReactionById({ message_id: id, emoji_name: 'octopus' })).result, 'success', 'messages.deleteReactionById');

  t.equal((await client.typing.send({ to: [peer.id], op: 'start' })).result, 'success', 'typing.send');
  t.ok(Array.isArray((await client.users.me.alertWords.retrieve()).alert_words), 'users.me.alertWords.retrieve');

  const queue = await client.queues.register({ event_types: ['message'] });
  t.equal(queue.result, 'success', 'queues.register');
  const poll = client.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id });
  await new Promise((r) => setTimeout(r, 100));
  await s.api('POST', '/messages', peer, { type: 'stream', to: streamId, topic: 'methods', content: 'wake up' });
  const events = await poll;
  t.match(events.events, [{ type: 'message', message: { sender_id: peer.id } }], 'events.retrieve');
  t.equal((await client.queues.deregister({ queue_id: queue.queue_id })).result, 'success', 'queues.deregister');

  t.equal((await client.messages.deleteById({ message_id: id })).result, 'success', 'messages.deleteById (an administrator)');
  t.equal((await client.users.me.subscriptions.remove({ subscriptions: JSON.stringify(['js client']) })).result, 'success', 'users.me.subscriptions.remove');
  t.equal((await client.streams.deleteById({ stream_id: streamId })).result, 'success', 'streams.deleteById');

  // Endpoints the real server removed before this feature level: a clean JSON error there and here.
  for (const [name, call] of [
    ['users.me.pointer.retrieve', () => client.users.me.pointer.retrieve()],
    ['users.me.pointer.update', () => client.users.me.pointer.update(id)],
    ['filters.retrieve', () => client.filters.retrieve()],
  ] as const) {
    const answer = await call();
    t.equal(answer.result, 'error', `${name}: the real server no longer routes it either`);
    t.type(answer.msg, 'string');
  }
});
