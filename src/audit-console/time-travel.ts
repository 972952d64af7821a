import { sql, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { EVENT_COLUMNS, type StoredEvent } from '../eventstore/types.js';
import type { EventOpener } from '../read/audit.js';

/**
 * The organization as it was at a log position, folded from the log alone (never from the live
 * read tables). Only what the page shows is folded: people and channels (few events, found through
 * the type index), and the messages of one channel, where the channel's last `limit` messages are
 * found first and only their own edits are applied. So the cost follows the page, not the log.
 */

export interface PastUser {
  id: number;
  full_name: string;
  email: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
}

export interface PastChannel {
  id: number;
  name: string;
  description: string;
  invite_only: boolean;
  archived: boolean;
  subscribers: Set<number>;
}

export interface PastMessage {
  id: number;
  sender_id: number;
  stream_id: number | null;
  topic: string;
  content: string;
  date_sent: number;
  edited: boolean;
  /** position of the last event that changed it */
  position: number;
}

const PEOPLE_TYPES = ['UserCreated', 'UserRenamed', 'UserRoleChanged', 'UserDeactivated', 'UserReactivated', 'UserEmailChanged'];
const CHANNEL_TYPES = ['StreamCreated', 'StreamPropertyChanged', 'StreamArchived', 'UserSubscribed', 'UserUnsubscribed'];

async function read(db: Db, realmId: number, upTo: number, types: readonly string[], open: EventOpener): Promise<StoredEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('type', 'in', [...types])
    .where('position', '<=', upTo)
    .where(sql<SqlBool>`(metadata->>'realm_id')::int = ${realmId}`)
    .orderBy('position')
    .execute();
  return open(rows as unknown as StoredEvent[]);
}

const num = (v: unknown): number => Number(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** People and channels at `upTo`. */
export async function pastDirectory(db: Db, realmId: number, upTo: number, open: EventOpener): Promise<{ users: Map<number, PastUser>; channels: Map<number, PastChannel> }> {
  const users = new Map<number, PastUser>();
  for (const e of await read(db, realmId, upTo, PEOPLE_TYPES, open)) {
    const d = e.data;
    const id = num(d.user_id);
    if (e.type === 'UserCreated') {
      users.set(id, { id, full_name: str(d.full_name), email: str(d.delivery_email) || str(d.email), role: num(d.role), is_active: true, is_bot: d.is_bot === true });
      continue;
    }
    const user = users.get(id);
    if (!user) continue;
    if (e.type === 'UserRenamed') user.full_name = str(d.full_name);
    else if (e.type === 'UserRoleChanged') user.role = num(d.role);
    else if (e.type === 'UserDeactivated') user.is_active = false;
    else if (e.type === 'UserReactivated') user.is_active = true;
    else if (e.type === 'UserEmailChanged') user.email = str(d.delivery_email) || str(d.email);
  }
  const channels = new Map<number, PastChannel>();
  for (const e of await read(db, realmId, upTo, CHANNEL_TYPES, open)) {
    const d = e.data;
    const id = num(d.stream_id);
    if (e.type === 'StreamCreated') {
      channels.set(id, { id, name: str(d.name), description: str(d.description), invite_only: d.invite_only === true, archived: false, subscribers: new Set() });
      continue;
    }
    const channel = channels.get(id);
    if (!channel) continue;
    if (e.type === 'StreamPropertyChanged') {
      if (d.property === 'name') channel.name = str(d.value);
      else if (d.property === 'description') channel.description = str(d.value);
      else if (d.property === 'invite_only') channel.invite_only = d.value === true;
    } else if (e.type === 'StreamArchived') channel.archived = true;
    else if (e.type === 'UserSubscribed') channel.subscribers.add(num(d.user_id));
    else if (e.type === 'UserUnsubscribed') channel.subscribers.delete(num(d.user_id));
  }
  return { users, channels };
}

/**
 * The last `limit` messages of a channel at `upTo`, as they read then. Edits, moves and deletions
 * that touched the channel are read first (few); every message they did not touch is where it was
 * sent, so the channel's last `limit + touched` sends hold the answer.
 */
export async function pastChannelMessages(db: Db, realmId: number, upTo: number, channelId: number, limit: number, open: EventOpener): Promise<PastMessage[]> {
  const id = String(channelId);
  const changes = (await open((await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('type', 'in', ['MessageEdited', 'MessagesDeleted'])
    .where('position', '<=', upTo)
    .where(sql<SqlBool>`(metadata->>'realm_id')::int = ${realmId}`)
    .where(sql<SqlBool>`(data->>'stream_id' = ${id} OR data->>'new_stream_id' = ${id})`)
    .orderBy('position')
    .execute()) as unknown as StoredEvent[]));
  const touched = new Set<number>();
  const movedIn = new Set<number>();
  for (const e of changes) {
    for (const m of (e.data.message_ids as number[] | undefined) ?? []) touched.add(m);
    if (e.type === 'MessageEdited' && num(e.data.new_stream_id) === channelId) for (const m of e.data.message_ids as number[]) movedIn.add(m);
  }
  const sentHere = await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('type', '=', 'MessageSent')
    .where('position', '<=', upTo)
    .where(sql<SqlBool>`(metadata->>'realm_id')::int = ${realmId}`)
    .where(sql<SqlBool>`data->>'stream_id' = ${id}`)
    .orderBy('position', 'desc')
    .limit(limit + touched.size)
    .execute();
  const movedInRows = movedIn.size === 0 ? [] : await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('type', '=', 'MessageSent')
    .where('position', '<=', upTo)
    .where('stream_id', 'in', [...movedIn].map((m) => `message-${m}`))
    .execute();
  const sent = await open([...sentHere, ...movedInRows] as unknown as StoredEvent[]);
  const messages = new Map<number, PastMessage>();
  for (const e of sent) {
    const d = e.data;
    messages.set(num(d.message_id), {
      id: num(d.message_id),
      sender_id: num(d.sender_id),
      stream_id: d.stream_id === null ? null : num(d.stream_id),
      topic: str(d.topic),
      content: str(d.content),
      date_sent: num(d.date_sent),
      edited: false,
      position: Number(e.position),
    });
  }
  // Edits of the moved-in messages made before they came here were filed on their earlier channel.
  const earlier = movedIn.size === 0 ? [] : await open((await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('type', '=', 'MessageEdited')
    .where('position', '<=', upTo)
    .where('stream_id', 'in', [...movedIn].map((m) => `message-${m}`))
    .execute()) as unknown as StoredEvent[]);
  const byPosition = new Map<number, StoredEvent>();
  for (const e of [...changes, ...earlier]) byPosition.set(Number(e.position), e);
  for (const e of [...byPosition.values()].sort((a, b) => Number(a.position) - Number(b.position))) {
    const d = e.data;
    const ids = (d.message_ids as number[] | undefined) ?? [];
    if (e.type === 'MessagesDeleted') {
      for (const m of ids) messages.delete(m);
      continue;
    }
    if (d.content !== null && d.content !== undefined) {
      const m = messages.get(num(d.message_id));
      if (m) Object.assign(m, { content: str(d.content), edited: true, position: Number(e.position) });
    }
    for (const mid of ids) {
      const m = messages.get(mid);
      if (!m) continue;
      if (d.new_topic !== null && d.new_topic !== undefined) Object.assign(m, { topic: str(d.new_topic), edited: true, position: Number(e.position) });
      if (d.new_stream_id !== null && d.new_stream_id !== undefined) Object.assign(m, { stream_id: num(d.new_stream_id), position: Number(e.position) });
    }
  }
  return [...messages.values()]
    .filter((m) => m.stream_id === channelId)
    .sort((a, b) => a.id - b.id)
    .slice(-limit);
}

/**
 * The last position of the state at a moment, as `replay --until` resolves it: the longest prefix
 * of the log whose events all happened at or before it. metadata.time is toISOString() text, so
 * migration 0180's (time, position) index answers it without reading the events.
 */
export async function positionAtMoment(db: Db, iso: string): Promise<number> {
  const moment = new Date(iso).toISOString();
  const { rows } = await sql<{ first_after: string | null; head: string }>`
    SELECT (SELECT min(position) FROM events WHERE metadata->>'time' > ${moment})::int8 AS first_after,
           (SELECT coalesce(max(position), 0) FROM events)::int8 AS head`.execute(db);
  const firstAfter = rows[0]!.first_after;
  return firstAfter === null ? Number(rows[0]!.head) : Number(firstAfter) - 1;
}
