import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { canonicalStreamName } from '../domain/channels/decider.js';
import type { StreamRow } from '../visibility.js';
import { isDbInt } from '../domain/ids.js';
import { SharedLookups } from './shared-lookups.js';
import { receivedSql } from '../read/narrow.js';

/** What the sender's automatic follow / unmute settings look at in the topic they send to. */
export interface SenderTopicState {
  /** the sender muted the channel */
  channelMuted: boolean;
  /** the sender's policy for the topic (0: none) */
  policy: number;
  /** the message whose key seals that policy's topic (null: none, or the user set it) */
  policySource: number | null;
  /** the topic has a message the sender can read */
  hasMessages: boolean;
}

/**
 * A channel as a send to it needs it: the row, its subscribers, who muted the sender, a fresh
 * message id, and the sender's view of the topic when the send asked for it.
 */
export type ChannelForSending = StreamRow & {
  subscriber_ids: number[];
  muter_ids: number[];
  message_id: number;
  topic_state: SenderTopicState | null;
};

/** One send waiting for the look-up: its sender, and the topic whose state it needs (null: none). */
interface Sending {
  senderId: number;
  topic: string | null;
}

/** By realm and channel; one item per send. */
const shared = new SharedLookups<string, Sending, ChannelForSending | undefined>();

/**
 * One round trip for concurrent sends to a channel: the first look-up goes at once; the sends to
 * the same channel that arrive while it is out wait for it, then share the next one, their message
 * ids drawn in the order they came. Undefined: no such active channel in the realm.
 */
export function findChannelForSending(
  db: Db, realmId: number, senderId: number, target: string | number, stateOfTopic: string | null,
): Promise<ChannelForSending | undefined> {
  if (typeof target === 'number' && !isDbInt(target)) return Promise.resolve(undefined);
  const key = typeof target === 'number' ? `${realmId}#${target}` : `${realmId}=${canonicalStreamName(target).toLowerCase()}`;
  return shared.get(db, key, { senderId, topic: stateOfTopic }, async (sends) => (await lookUp(db, realmId, target, sends)) ?? sends.map(() => undefined));
}

type TopicStateRow = [index: number, muted: boolean | null, policy: number | null, source: number | null, hasMessages: boolean];

/**
 * Per send that asked (by its index in the batch): the sender's channel mute, their policy for the
 * topic and its source, and whether the topic has a message they can read (where history is
 * protected, one they received).
 */
function topicStatesSql(sends: Sending[]) {
  const asked = sends.flatMap((send, i) => (send.topic === null ? [] : [{ i, senderId: send.senderId, topic: send.topic }]));
  if (asked.length === 0) return sql<TopicStateRow[] | null>`NULL::json`;
  const received = receivedSql(sql.ref('t.u'));
  return sql<TopicStateRow[] | null>`(SELECT json_agg(json_build_array(t.i,
      (SELECT s.is_muted FROM subscriptions s WHERE s.user_id = t.u AND s.stream_id = streams.id AND s.active),
      p.visibility_policy, p.message_id,
      EXISTS (SELECT 1 FROM messages m WHERE m.stream_id = streams.id AND lower(m.topic) = lower(t.topic)
        AND (NOT streams.invite_only OR streams.history_public_to_subscribers OR ${received}))))
    FROM unnest(${asked.map((a) => a.i)}::int[], ${asked.map((a) => a.senderId)}::int[], ${asked.map((a) => a.topic)}::text[]) AS t(i, u, topic)
    LEFT JOIN LATERAL (SELECT x.visibility_policy, x.message_id FROM user_topics x
      WHERE x.user_id = t.u AND x.stream_id = streams.id AND lower(x.topic) = lower(t.topic) LIMIT 1) p ON TRUE)`;
}

async function lookUp(db: Db, realmId: number, target: string | number, sends: Sending[]): Promise<ChannelForSending[] | undefined> {
  const senderIds = sends.map((send) => send.senderId);
  const q = db
    .selectFrom('streams')
    .selectAll()
    .select(sql<number[] | null>`(SELECT array_agg(sub.user_id) FROM subscriptions sub WHERE sub.stream_id = streams.id AND sub.active)`.as('subscriber_ids'))
    .select(sql<Array<[number, number]> | null>`(SELECT json_agg(json_build_array(m.muted_user_id, m.user_id)) FROM muted_users m WHERE m.muted_user_id = ANY(${senderIds}::int[]))`.as('mutes'))
    .select(sql<Array<number | string>>`ARRAY(SELECT nextval('message_id_seq')::int8 FROM generate_series(1, ${senderIds.length}::int))`.as('message_ids'))
    .select(topicStatesSql(sends).as('topic_states'))
    .where('realm_id', '=', realmId)
    .where('deactivated', '=', false);
  const row = await (typeof target === 'number'
    ? q.where('id', '=', target).executeTakeFirst()
    : q.where(sql`lower(name)`, '=', canonicalStreamName(target).toLowerCase()).executeTakeFirst());
  if (!row) return undefined;
  const { subscriber_ids, mutes, message_ids, topic_states, ...stream } = row;
  const subscribers = (subscriber_ids ?? []).map(Number);
  const ids = message_ids.map(Number).sort((a, b) => a - b);
  const states = new Map((topic_states ?? []).map(([i, muted, policy, source, hasMessages]): [number, SenderTopicState] => [
    Number(i),
    { channelMuted: muted === true, policy: Number(policy ?? 0), policySource: source === null ? null : Number(source), hasMessages },
  ]));
  return senderIds.map((senderId, i) => ({
    ...stream,
    subscriber_ids: subscribers,
    muter_ids: (mutes ?? []).filter(([muted]) => muted === senderId).map(([, muter]) => muter),
    message_id: ids[i]!,
    topic_state: states.get(i) ?? null,
  }));
}
