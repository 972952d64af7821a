/**
 * Topic preferences a send or a move sets (a user follows the topics they start, or where they are
 * mentioned) name their topic under a message's key: forgetting the message forgets them, the
 * rebuild folds what the live tables hold, and while the topic lives on the preference does too.
 */
import t, { type Test } from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { tablesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { verifyAction } from '../helpers/verify-action.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { applyRetention } from '../../src/services/retention.js';
import { getDefaultRealm } from '../../src/read/realm.js';

const register = { event_types: ['user_topic'], fetch_event_types: ['user_topic'] };

async function topicsOf(s: TestServer, user: TestUser): Promise<Array<{ topic_name: string; visibility_policy: number }>> {
  return (await s.api('POST', '/register', user, { fetch_event_types: ['user_topic'] })).body.user_topics;
}

async function rebuildMatches(t: Test, s: TestServer): Promise<void> {
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'a rebuild from the log folds the same tables');
}

t.test('a forgotten message takes the follow it started with it: nowhere in the log or the tables', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'forget-follow', [bob]);
  const topic = uniqueMarker();
  let id = 0;
  await verifyAction(t, s, alice, async () => { id = await sendStream(s, alice, sid, topic, 'started'); }, { register });
  t.match(await topicsOf(s, alice), [{ topic_name: topic, visibility_policy: 3 }], 'starting the topic follows it');
  // Bob is mentioned in a second topic: his follow is sealed under that message's key.
  const mentionTopic = uniqueMarker();
  const mentionId = await sendStream(s, alice, sid, mentionTopic, '@**Bob**');
  t.match(await topicsOf(s, bob), [{ topic_name: mentionTopic, visibility_policy: 3 }], 'a mention follows the topic');

  t.equal((await s.api('DELETE', `/messages/${id}`, s.owner, { purge: true })).status, 200);
  t.equal((await s.api('DELETE', `/messages/${mentionId}`, s.owner, { purge: true })).status, 200);
  t.same(await tablesContaining(s.platform.db, topic), [], 'the topic is in no table, the log included');
  t.same(await tablesContaining(s.platform.db, mentionTopic), [], "the mention's topic neither");
  t.same((await topicsOf(s, alice)).filter((x) => x.topic_name === topic), []);
  t.same((await topicsOf(s, bob)).filter((x) => x.topic_name === mentionTopic), []);
  await rebuildMatches(t, s);
  t.ok((await verifyChain(s.platform.db)).ok, 'the hash chain still verifies');
});

t.test('deleting the message that started a topic keeps the follow while the topic has messages; emptying it ends the follow', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'handover', [bob]);
  const first = await sendStream(s, alice, sid, 'plans', 'first');
  const reply = await sendStream(s, bob, sid, 'plans', 'a reply');
  const events = await verifyAction(t, s, alice, () => s.api('DELETE', `/messages/${first}`, alice), { register });
  t.match(events, [{ type: 'user_topic', topic_name: 'plans', visibility_policy: 3 }], 'the follow is told again, unchanged');
  t.match(await topicsOf(s, alice), [{ topic_name: 'plans', visibility_policy: 3 }], 'still followed');
  // Bob follows too (he started nothing, but set it himself): deleting messages leaves his as it is.
  t.equal((await s.api('POST', '/user_topics', bob, { stream_id: sid, topic: 'plans', visibility_policy: 3 })).status, 200);
  const emptied = await verifyAction(t, s, alice, () => s.api('DELETE', `/messages/${reply}`, s.owner), { register });
  t.match(emptied, [{ type: 'user_topic', topic_name: 'plans', visibility_policy: 0 }], 'the topic is gone: so is the follow it gave');
  t.same(await topicsOf(s, alice), []);
  t.match(await topicsOf(s, bob), [{ topic_name: 'plans', visibility_policy: 3 }], 'a preference the user set stays');
  await rebuildMatches(t, s);
});

t.test('retention forgets a long topic\'s first message: the follow moves to its newest', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'kept-short', []);
  const topic = uniqueMarker();
  await sendStream(s, alice, sid, topic, 'old');
  t.equal((await s.api('PATCH', `/streams/${sid}`, s.owner, { message_retention_days: JSON.stringify(1) })).status, 200);
  const realm = (await getDefaultRealm(s.platform.db))!;
  // Sent "later": retention at two days from now forgets only the first.
  t.equal(await applyRetention(s.platform, realm, new Date(Date.now() + 2 * 86_400_000)), 1, 'one message forgotten');
  t.same(await topicsOf(s, alice), [], 'the topic had no other message: the follow went with it');
  const second = uniqueMarker();
  await sendStream(s, alice, sid, second, 'one');
  const newest = await sendStream(s, alice, sid, second, 'two');
  const row = await s.platform.db.selectFrom('user_topics').select('message_id').where('user_id', '=', alice.id).executeTakeFirstOrThrow();
  t.not(row.message_id, newest, 'sealed under the message that started the topic');
  await s.platform.db.updateTable('messages').set({ date_sent: Math.floor(Date.now() / 1000) - 3 * 86_400 }).where('id', '<', newest).execute();
  t.equal(await applyRetention(s.platform, realm, new Date()), 1, 'the older message forgotten');
  t.match(await topicsOf(s, alice), [{ topic_name: second, visibility_policy: 3 }], 'the topic lives on, and so does the follow');
  const moved = await s.platform.db.selectFrom('user_topics').select('message_id').where('user_id', '=', alice.id).executeTakeFirstOrThrow();
  t.equal(moved.message_id, newest, 'now sealed under the newest message');
  await rebuildMatches(t, s);
});

t.test('a moved topic\'s follow names the new topic under the moved message\'s key', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'moving', []);
  const id = await sendStream(s, alice, sid, 'before', 'x');
  const renamed = uniqueMarker();
  const events = await verifyAction(t, s, alice, () => s.api('PATCH', `/messages/${id}`, alice, { topic: renamed, propagate_mode: 'change_all' }), { register });
  t.match(events.filter((e) => e.type === 'user_topic').map((e) => [e.topic_name, e.visibility_policy]), [['before', 0], [renamed, 3]]);
  t.equal((await s.api('DELETE', `/messages/${id}`, s.owner, { purge: true })).status, 200);
  t.same(await tablesContaining(s.platform.db, renamed), [], 'the new name is forgotten with the message');
  await rebuildMatches(t, s);
});
