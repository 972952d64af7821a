import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { UserTopicPolicySet } from '../domain/channels/events.js';
import type { StreamAppend } from '../eventstore/types.js';

/**
 * Topic preferences that a send or a move set name their topic under one message's key, and go
 * with that message (src/domain/channels/topic-policy-source.ts). When that message is deleted or
 * forgotten while its topic lives on, the preference is handed over to the topic's newest other
 * message (the last one a retention period forgets), unchanged for the user; when deleting leaves
 * the topic empty, the preference ends (policy 0), as the topic has. A forgotten message's
 * preferences with nothing to hand over to are dropped by the shred's fold.
 *
 * The appends go in the same command as the deletion or the shred.
 */
export async function topicPolicyHandovers(db: Db, ids: readonly number[], ending: boolean): Promise<StreamAppend[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ user_id: number; stream_id: number; topic: string; visibility_policy: number; last_updated: number | string; message_id: number; next: number | null }>`
    SELECT t.user_id, t.stream_id, t.topic, t.visibility_policy, t.last_updated, t.message_id,
      (SELECT max(m.id) FROM messages m WHERE m.stream_id = t.stream_id AND lower(m.topic) = lower(t.topic)
        AND m.id <> ALL(${[...ids]}::int[])) AS next
    FROM user_topics t WHERE t.message_id = ANY(${[...ids]}::int[])
    ORDER BY t.user_id, t.stream_id, t.topic`.execute(db);
  const byUser = new Map<number, UserTopicPolicySet[]>();
  for (const row of rows) {
    const next = row.next === null ? null : Number(row.next);
    if (next === null && !ending) continue;
    const event: UserTopicPolicySet = {
      type: 'UserTopicPolicySet',
      data: {
        user_id: row.user_id,
        stream_id: row.stream_id,
        topic: row.topic,
        visibility_policy: next === null ? 0 : row.visibility_policy,
        last_updated: Number(row.last_updated),
        message_id: next ?? Number(row.message_id),
      },
    };
    byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), event]);
  }
  // Per-user topic preferences are last-writer-wins; no version to check.
  return [...byUser].map(([userId, events]) => ({ streamId: `user-topics-${userId}`, expectedVersion: undefined, events }));
}
