import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { Db } from '../../db/database.js';
import type { DataOf } from '../../domain/events.js';
import { VisibilityPolicy } from '../../domain/channels/decider.js';

/** The deprecated muted_topics form: [channel name, topic, last updated] of each muted topic. */
async function mutedTopics(db: Db, userId: number): Promise<Array<[string, string, number]>> {
  const rows = await db
    .selectFrom('user_topics as t')
    .innerJoin('streams as s', 's.id', 't.stream_id')
    .select(['s.name', 't.topic', 't.last_updated'])
    .where('t.user_id', '=', userId)
    .where('t.visibility_policy', '=', VisibilityPolicy.MUTED)
    .where('s.deactivated', '=', false)
    .orderBy('t.last_updated')
    .execute();
  return rows.map((r) => [r.name, r.topic, Number(r.last_updated)]);
}

// Older clients read muted_topics; a client that also fetches user_topic gets that instead, as on the real server.
registerSection('muted_topics', async ({ trx, user, wanted }) => {
  if (wanted?.has('user_topic')) return {};
  return { muted_topics: await mutedTopics(trx as Db, user.id) };
});

// Every change of a topic's policy also sends the whole new list to the user's legacy clients (before user_topic).
registerTranslator('UserTopicPolicySet', async (event, db) => {
  const d = event.data as DataOf<'UserTopicPolicySet'>;
  const list = await mutedTopics(db, d.user_id);
  return { audience: new Set([d.user_id]), forUser: () => [{ type: 'muted_topics', muted_topics: list }] };
});
