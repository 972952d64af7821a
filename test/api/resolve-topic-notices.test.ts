/**
 * Notification Bot's "has marked this topic as resolved/unresolved" notices: unread only for the
 * people who took part in the topic, and taken back instead of answered when the change is undone
 * within the grace period (RESOLVE_TOPIC_UNDO_GRACE_SECONDS), as on the real server.
 */
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';

type Shown = { id: number; content: string; flags: string[] };

async function topicAs(s: TestServer, as: TestUser, channel: string, topic: string): Promise<Shown[]> {
  const r = await s.api('GET', '/messages', as, {
    anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false,
    narrow: [{ operator: 'channel', operand: channel }, { operator: 'topic', operand: topic }],
  });
  return r.body.messages as Shown[];
}

const rename = (s: TestServer, as: TestUser, id: number, topic: string) =>
  s.api('PATCH', `/messages/${id}`, as, { topic, propagate_mode: 'change_all' });

t.test('a resolve notice is unread only for the topic\'s participants', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const [writer, reactor, bystander] = await Promise.all(['Writer', 'Reactor', 'Bystander'].map((n) => s.user(Role.MEMBER, n)));
  await createChannel(s, iago, 'support', [writer!, reactor!, bystander!]);
  const id = await sendStream(s, writer!, 'support', 'printer', 'it is on fire');
  await s.api('POST', `/messages/${id}/reactions`, reactor!, { emoji_name: 'fire' });
  t.equal((await rename(s, iago, id, '✔ printer')).status, 200);
  const flagsOf = async (u: TestUser) => (await topicAs(s, u, 'support', '✔ printer')).at(-1)!.flags;
  t.match((await topicAs(s, iago, 'support', '✔ printer')).at(-1), { content: `@_**Iago|${iago.id}** has marked this topic as resolved.` });
  t.notOk((await flagsOf(writer!)).includes('read'), 'unread for who wrote in it');
  t.notOk((await flagsOf(reactor!)).includes('read'), 'unread for who reacted in it');
  t.ok((await flagsOf(bystander!)).includes('read'), 'read for a subscriber who took no part');
  t.ok((await flagsOf(iago)).includes('read'), 'read for the one who resolved it');
});

t.test('undone within the grace period, the notice is taken back; after it, a second notice follows', async (t) => {
  const s = await startTestServer(t, { resolveTopicUndoGraceSeconds: 60 }, { organization: 'full' });
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  await createChannel(s, iago, 'new', [hamlet]);
  const first = await sendStream(s, hamlet, 'new', 'topic 1', 'message 1');
  await sendStream(s, iago, 'new', 'topic 1', 'message 2');
  const mention = `@_**Iago|${iago.id}**`;

  t.equal((await rename(s, iago, first, '✔ topic 1')).status, 200);
  const resolved = await topicAs(s, iago, 'new', '✔ topic 1');
  t.same(resolved.map((m) => m.content), ['message 1', 'message 2', `${mention} has marked this topic as resolved.`]);
  t.equal((await rename(s, iago, first, 'topic 1')).status, 200);
  t.same((await topicAs(s, iago, 'new', 'topic 1')).map((m) => m.content), ['message 1', 'message 2'], 'the notice is gone, none added');
  t.equal((await s.api('GET', `/messages/${resolved.at(-1)!.id}`, iago)).status, 400, 'deleted, not hidden');

  // Resolved again, then the notice ages past the grace period: undoing now says so.
  t.equal((await rename(s, iago, first, '✔ topic 1')).status, 200);
  await s.platform.db.updateTable('messages').set({ date_sent: Math.floor(Date.now() / 1000) - 61 }).where('stream_id', 'is not', null).execute();
  t.equal((await rename(s, iago, first, 'topic 1')).status, 200);
  t.same((await topicAs(s, iago, 'new', 'topic 1')).map((m) => m.content), [
    'message 1', 'message 2', `${mention} has marked this topic as resolved.`, `${mention} has marked this topic as unresolved.`,
  ]);

  // A message after the notice: the notice is no longer the topic's last word, so it stays.
  t.equal((await rename(s, iago, first, '✔ topic 1')).status, 200);
  await sendStream(s, hamlet, 'new', '✔ topic 1', 'thanks!');
  t.equal((await rename(s, iago, first, 'topic 1')).status, 200);
  const contents = (await topicAs(s, iago, 'new', 'topic 1')).map((m) => m.content);
  t.same(contents.slice(-3), [`${mention} has marked this topic as resolved.`, 'thanks!', `${mention} has marked this topic as unresolved.`]);
});
