import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { canonicalStreamName } from '../domain/channels/decider.js';
import type { StreamRow } from '../visibility.js';
import { isDbInt } from '../domain/ids.js';

/** A channel as a send to it needs it: the row, its subscribers, who muted the sender, and a fresh message id. */
export type ChannelForSending = StreamRow & { subscriber_ids: number[]; muter_ids: number[]; message_id: number };

interface Waiter {
  senderId: number;
  resolve(channel: ChannelForSending | undefined): void;
  reject(error: unknown): void;
}
interface Lane {
  waiting: Waiter[];
}

/** Ids one round trip draws at most. */
const MAX_SHARED = 256;
const lanesByDb = new WeakMap<object, Map<string, Lane>>();

/**
 * One round trip for concurrent sends to a channel: the first look-up goes at once; the sends to
 * the same channel that arrive while it is out wait for it, then share the next one, their message
 * ids drawn in the order they came. Undefined: no such active channel in the realm.
 */
export function findChannelForSending(db: Db, realmId: number, senderId: number, target: string | number): Promise<ChannelForSending | undefined> {
  if (typeof target === 'number' && !isDbInt(target)) return Promise.resolve(undefined);
  const key = typeof target === 'number' ? `${realmId}#${target}` : `${realmId}=${canonicalStreamName(target).toLowerCase()}`;
  let lanes = lanesByDb.get(db);
  if (!lanes) lanesByDb.set(db, (lanes = new Map()));
  const existing = lanes.get(key);
  const lane = existing ?? { waiting: [] };
  const answer = new Promise<ChannelForSending | undefined>((resolve, reject) => lane.waiting.push({ senderId, resolve, reject }));
  if (!existing) {
    lanes.set(key, lane);
    void serveLane(db, realmId, target, lane).finally(() => lanes.delete(key));
  }
  return answer;
}

async function serveLane(db: Db, realmId: number, target: string | number, lane: Lane): Promise<void> {
  while (lane.waiting.length > 0) {
    const batch = lane.waiting.splice(0, MAX_SHARED);
    try {
      const channels = await lookUp(db, realmId, target, batch.map((w) => w.senderId));
      batch.forEach((waiter, i) => waiter.resolve(channels?.[i]));
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
    }
  }
}

async function lookUp(db: Db, realmId: number, target: string | number, senderIds: number[]): Promise<ChannelForSending[] | undefined> {
  const q = db
    .selectFrom('streams')
    .selectAll()
    .select(sql<number[] | null>`(SELECT array_agg(sub.user_id) FROM subscriptions sub WHERE sub.stream_id = streams.id AND sub.active)`.as('subscriber_ids'))
    .select(sql<Array<[number, number]> | null>`(SELECT json_agg(json_build_array(m.muted_user_id, m.user_id)) FROM muted_users m WHERE m.muted_user_id = ANY(${senderIds}::int[]))`.as('mutes'))
    .select(sql<Array<number | string>>`ARRAY(SELECT nextval('message_id_seq')::int8 FROM generate_series(1, ${senderIds.length}::int))`.as('message_ids'))
    .where('realm_id', '=', realmId)
    .where('deactivated', '=', false);
  const row = await (typeof target === 'number'
    ? q.where('id', '=', target).executeTakeFirst()
    : q.where(sql`lower(name)`, '=', canonicalStreamName(target).toLowerCase()).executeTakeFirst());
  if (!row) return undefined;
  const { subscriber_ids, mutes, message_ids, ...stream } = row;
  const subscribers = (subscriber_ids ?? []).map(Number);
  const ids = message_ids.map(Number).sort((a, b) => a - b);
  return senderIds.map((senderId, i) => ({
    ...stream,
    subscriber_ids: subscribers,
    muter_ids: (mutes ?? []).filter(([muted]) => muted === senderId).map(([, muter]) => muter),
    message_id: ids[i]!,
  }));
}
