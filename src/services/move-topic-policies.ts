import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { UserTopicPolicySet } from '../domain/channels/events.js';
import { Role } from '../domain/roles.js';
import type { UserRow } from '../read/users.js';
import { receivedSql } from '../read/narrow.js';
import { streamHistoryIsProtected, type StreamRow } from '../visibility.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import type { MoveOutcome } from './move-notifications.js';
import { topicPolicySource } from '../domain/channels/topic-policy-source.js';

/**
 * Users' topic preferences (muted, unmuted, followed) follow a topic that moved whole, as on the
 * real server: each user's policy leaves the old topic and lands on the new one; where the new topic
 * already had messages, the more visible of the two policies wins (followed, unmuted, inherit,
 * muted). Users who lose access to the messages lose their policy on the old topic and gain none.
 */

const INHERIT = 0;
const MUTED = 1;
const UNMUTED = 2;
const FOLLOWED = 3;

/** The more visible of two policies: followed, then unmuted, then inherit, then muted. */
export function mergedPolicy(a: number, b: number): number {
  for (const policy of [FOLLOWED, UNMUTED, INHERIT]) if (a === policy || b === policy) return policy;
  return MUTED;
}

/** Whether the mover can see any message of the old topic still there (otherwise they moved it all). */
export async function movedWholeTopic(db: Db, actor: UserRow, move: MoveOutcome): Promise<boolean> {
  if (move.propagateMode === 'change_all') return true;
  const from = await db.selectFrom('streams').selectAll().where('id', '=', move.fromStreamId).executeTakeFirst();
  if (!from) return true;
  return !(await topicHasMessages(db, from, move.fromTopic, [], actor.id));
}

/** Whether a topic has messages apart from `except` (seen by `viewerId` where history is protected, when given). */
export async function topicHasMessages(db: Db, stream: StreamRow, topic: string, except: number[], viewerId?: number): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    SELECT m.id FROM messages m
    WHERE m.stream_id = ${stream.id} AND lower(m.topic) = ${topic.toLowerCase()}
      ${except.length > 0 ? sql`AND m.id <> ALL(${except}::int[])` : sql``}
      ${viewerId !== undefined && streamHistoryIsProtected(stream) ? sql`AND ${receivedSql(viewerId)}` : sql``}
    LIMIT 1`.execute(db);
  return rows.length > 0;
}

interface Preference {
  policy: number;
  /** the message whose key seals the topic in the event that set it (null: the user set it) */
  source: number | null;
}

async function policiesOf(db: Db, streamId: number, topic: string): Promise<Map<number, Preference>> {
  const rows = await db.selectFrom('user_topics').select(['user_id', 'visibility_policy', 'message_id'])
    .where('stream_id', '=', streamId)
    .where((eb) => eb(eb.fn('lower', ['topic']), '=', topic.toLowerCase()))
    .execute();
  return new Map(rows.map((r) => [r.user_id, { policy: r.visibility_policy, source: r.message_id }]));
}

export async function moveTopicPolicies(ctx: ServiceContext, meta: RequestMeta, move: MoveOutcome): Promise<void> {
  const streams = await ctx.db.selectFrom('streams').selectAll().where('id', 'in', [move.fromStreamId, move.toStreamId]).execute();
  const to = streams.find((s) => s.id === move.toStreamId);
  // A rename that changes only the letter case keeps the (case-insensitive) topic and its policies.
  if (!to || (move.fromStreamId === move.toStreamId && move.fromTopic.toLowerCase() === move.toTopic.toLowerCase())) return;
  const [orig, target] = await Promise.all([policiesOf(ctx.db, move.fromStreamId, move.fromTopic), policiesOf(ctx.db, move.toStreamId, move.toTopic)]);
  if (orig.size === 0 && target.size === 0) return;
  // The new topic "had messages" when something other than the moved messages is there.
  const targetHadMessages = await topicHasMessages(ctx.db, to, move.toTopic, move.movedIds);
  const losing = new Set<number>();
  if (move.fromStreamId !== move.toStreamId && orig.size > 0) {
    const ids = [...orig.keys()];
    const [subscribed, users] = await Promise.all([
      ctx.db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', to.id).where('active', '=', true).where('user_id', 'in', ids).execute(),
      ctx.db.selectFrom('users').select(['id', 'role']).where('id', 'in', ids).execute(),
    ]);
    const inTarget = new Set(subscribed.map((r) => r.user_id));
    for (const u of users) if (!inTarget.has(u.id) && (to.invite_only || u.role === Role.GUEST)) losing.add(u.id);
  }
  const now = Math.floor(meta.now.getTime() / 1000);
  // Each event names its topic under the key topicPolicySource picks: the replaced row's, or the moved message's.
  const set = (userId: number, streamId: number, topic: string, policy: number, replacing: Preference | undefined): UserTopicPolicySet => {
    const source = topicPolicySource(replacing, move.messageId);
    return {
      type: 'UserTopicPolicySet',
      data: { user_id: userId, stream_id: streamId, topic, visibility_policy: policy, last_updated: now, ...(source !== undefined ? { message_id: source } : {}) },
    };
  };
  const events = new Map<number, UserTopicPolicySet[]>();
  const add = (userId: number, event: UserTopicPolicySet) => events.set(userId, [...(events.get(userId) ?? []), event]);
  for (const userId of losing) add(userId, set(userId, move.fromStreamId, move.fromTopic, INHERIT, orig.get(userId)));
  const users = new Set([...orig.keys(), ...target.keys()].filter((u) => !losing.has(u)));
  for (const userId of [...users].sort((a, b) => a - b)) {
    const before = orig.get(userId)?.policy ?? INHERIT;
    const there = target.get(userId)?.policy ?? INHERIT;
    if (before !== INHERIT) add(userId, set(userId, move.fromStreamId, move.fromTopic, INHERIT, orig.get(userId)));
    const after = targetHadMessages ? mergedPolicy(before, there) : before;
    if (after !== there) add(userId, set(userId, move.toStreamId, move.toTopic, after, target.get(userId)));
  }
  if (events.size === 0) return;
  await ctx.commands.run(metadataOf(meta), async () => ({
    // Per-user topic preferences are last-writer-wins; no version to check.
    appends: [...events].map(([userId, list]) => ({ streamId: `user-topics-${userId}`, expectedVersion: undefined, events: list })),
    result: undefined,
  }));
}
