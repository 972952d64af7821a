import { registerSection } from '../sections.js';
import type { Db } from '../../db/database.js';
import { VisibilityPolicy } from '../../domain/channels/decider.js';

/**
 * The deprecated `muted_topics` list ([channel name, topic, last updated]) that older clients read;
 * a client that also fetches user_topic gets that instead, as on the real server.
 */
registerSection('muted_topics', async ({ trx, user, wanted }) => {
  if (wanted?.has('user_topic')) return {};
  const rows = await (trx as Db)
    .selectFrom('user_topics as t')
    .innerJoin('streams as s', 's.id', 't.stream_id')
    .select(['s.name', 't.topic', 't.last_updated'])
    .where('t.user_id', '=', user.id)
    .where('t.visibility_policy', '=', VisibilityPolicy.MUTED)
    .where('s.deactivated', '=', false)
    .orderBy('t.last_updated')
    .execute();
  return { muted_topics: rows.map((r) => [r.name, r.topic, Number(r.last_updated)]) };
});
