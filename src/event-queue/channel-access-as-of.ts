import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import { upcast } from '../eventstore/upcast.js';
import { channelStream, subscriptionStream } from '../services/channels.js';
import type { StreamRow } from '../visibility.js';

export interface ChannelAsOf {
  /** The channel's current row with its access flags (invite_only, is_web_public) as they were. */
  stream: StreamRow;
  /** The user was an active subscriber then. */
  subscribed: boolean;
}

const CHANNEL_TYPES = ['StreamCreated', 'StreamPropertyChanged', 'StreamArchived'];
const SUBSCRIPTION_TYPES = ['UserSubscribed', 'UserUnsubscribed'];

async function history(db: Db, streamIds: string[], types: string[], position: number): Promise<StoredEvent[]> {
  if (streamIds.length === 0) return [];
  const rows = await db
    .selectFrom('events')
    .select(['stream_id', 'type', 'schema_version', 'data', 'position'])
    .where('stream_id', 'in', streamIds)
    .where('type', 'in', types)
    .where('position', '<=', position)
    .orderBy('position')
    .execute();
  return rows.map((row) => upcast(row as unknown as StoredEvent));
}

/**
 * The realm's live channels when the event at `position` was recorded, with what decides who may
 * see them (privacy, the user's subscription), folded from the log up to that event: the read
 * tables may already hold later changes when a queue reads the event, and the answer must not
 * depend on when that is. Channels never leave the streams table, so it names every candidate.
 */
export async function channelsAsOf(db: Db, realmId: number, userId: number, position: number): Promise<ChannelAsOf[]> {
  const rows = await db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const byName = new Map(rows.map((row) => [channelStream(row.id), row]));
  const flags = new Map<number, { live: boolean; invite_only: boolean; is_web_public: boolean }>();
  for (const e of await history(db, [...byName.keys()], CHANNEL_TYPES, position)) {
    const id = byName.get(e.stream_id)!.id;
    const d = e.data as { property?: string; value?: unknown; invite_only?: boolean; is_web_public?: boolean };
    if (e.type === 'StreamCreated') {
      flags.set(id, { live: true, invite_only: d.invite_only === true, is_web_public: d.is_web_public === true });
      continue;
    }
    const current = flags.get(id);
    if (!current) continue;
    if (e.type === 'StreamArchived') current.live = false;
    else if (d.property === 'invite_only' || d.property === 'is_web_public') current[d.property] = d.value === true;
  }
  const subscribed = new Set<number>();
  const subscriptionNames = new Map(rows.map((row) => [subscriptionStream(row.id, userId), row.id]));
  for (const e of await history(db, [...subscriptionNames.keys()], SUBSCRIPTION_TYPES, position)) {
    const id = subscriptionNames.get(e.stream_id)!;
    if (e.type === 'UserSubscribed') subscribed.add(id);
    else subscribed.delete(id);
  }
  const out: ChannelAsOf[] = [];
  for (const row of rows) {
    const then = flags.get(row.id);
    if (!then?.live) continue;
    out.push({
      stream: { ...row, deactivated: false, invite_only: then.invite_only, is_web_public: then.is_web_public },
      subscribed: subscribed.has(row.id),
    });
  }
  return out;
}
