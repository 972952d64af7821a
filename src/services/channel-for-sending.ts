import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { canonicalStreamName } from '../domain/channels/decider.js';
import type { StreamRow } from '../visibility.js';
import { isDbInt } from '../domain/ids.js';
import { SharedLookups } from './shared-lookups.js';

/** A channel as a send to it needs it: the row, its subscribers, who muted the sender, and a fresh message id. */
export type ChannelForSending = StreamRow & { subscriber_ids: number[]; muter_ids: number[]; message_id: number };

/** By realm and channel; one item per send: its sender. */
const shared = new SharedLookups<string, number, ChannelForSending | undefined>();

/**
 * One round trip for concurrent sends to a channel: the first look-up goes at once; the sends to
 * the same channel that arrive while it is out wait for it, then share the next one, their message
 * ids drawn in the order they came. Undefined: no such active channel in the realm.
 */
export function findChannelForSending(db: Db, realmId: number, senderId: number, target: string | number): Promise<ChannelForSending | undefined> {
  if (typeof target === 'number' && !isDbInt(target)) return Promise.resolve(undefined);
  const key = typeof target === 'number' ? `${realmId}#${target}` : `${realmId}=${canonicalStreamName(target).toLowerCase()}`;
  return shared.get(db, key, senderId, async (senderIds) => (await lookUp(db, realmId, target, senderIds)) ?? senderIds.map(() => undefined));
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
