import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { EVENT_COLUMNS, type StoredEvent } from '../eventstore/types.js';
import { toEntry, type AuditEntry, type EventOpener } from '../read/audit.js';

/** What the log page, its chart and the export filter on; every given field must hold (AND). */
export interface ConsoleFilter {
  realmId: number;
  /** ISO 8601 bounds on metadata.time, both inclusive */
  since?: string;
  until?: string;
  actorId?: number;
  types?: readonly string[];
  /** the channel's own stream, or any event whose data names it (a message sent to it, a move) */
  channelId?: number;
  /** the user's own stream, or any event whose data names the user as its subject */
  userId?: number;
  /** the message's own stream, or any event whose data lists it (moves, deletions, reactions) */
  messageId?: number;
}

export type LogOrder = 'newest' | 'position';

export interface LogPage {
  entries: AuditEntry[];
  /** cursor for the next page in the same order, null on the last page */
  next: number | null;
}

/** The conditions of a filter, as SQL; values are always bound parameters. */
function conditions(filter: ConsoleFilter): Array<Expression<SqlBool>> {
  const where: Array<Expression<SqlBool>> = [sql<SqlBool>`(metadata->>'realm_id')::int = ${filter.realmId}`];
  // metadata.time is always toISOString() output (EventMetadata): text order is time order, and
  // the comparison can use migration 0180's index. The bounds are normalized the same way.
  if (filter.since !== undefined) where.push(sql<SqlBool>`metadata->>'time' >= ${new Date(filter.since).toISOString()}`);
  if (filter.until !== undefined) where.push(sql<SqlBool>`metadata->>'time' <= ${new Date(filter.until).toISOString()}`);
  if (filter.actorId !== undefined) where.push(sql<SqlBool>`(metadata->>'actor_id')::int = ${filter.actorId}`);
  if (filter.types && filter.types.length > 0) where.push(sql<SqlBool>`type IN (${sql.join([...filter.types])})`);
  if (filter.channelId !== undefined) {
    const id = String(filter.channelId);
    where.push(sql<SqlBool>`(stream_id = ${`channel-${id}`} OR data->>'stream_id' = ${id} OR data->>'new_stream_id' = ${id})`);
  }
  if (filter.userId !== undefined) {
    const id = String(filter.userId);
    where.push(sql<SqlBool>`(stream_id = ${`user-${id}`} OR data->>'user_id' = ${id})`);
  }
  if (filter.messageId !== undefined) {
    // Its own stream holds what was sent, its edits and reactions; every other event about it
    // lists it in message_ids (a move or deletion of its topic, shredding, flags). Both are indexed.
    const id = filter.messageId;
    where.push(sql<SqlBool>`(stream_id = ${`message-${id}`} OR data->'message_ids' @> ${JSON.stringify([id])}::jsonb)`);
  }
  return where;
}

/**
 * One page of the filtered log. Newest first walks positions downwards from `cursor` (exclusive);
 * by position walks upwards from it.
 *
 * Filters the indexes answer (event type, message, time range) are one query. The others (actor,
 * channel, user) match conditions on JSON fields the planner cannot estimate: it guessed a handful of
 * rows and sorted a scan of the whole log (1.5-2.5 s on 1M events). They walk the primary key instead,
 * in windows that double from WINDOW positions, so a frequent value costs one small window and a rare
 * one at worst the whole log once.
 */
export async function logPage(db: Db, filter: ConsoleFilter, order: LogOrder, cursor: number | undefined, limit: number, open: EventOpener, window = WINDOW): Promise<LogPage> {
  const base = () => {
    let query = db.selectFrom('events').select([...EVENT_COLUMNS]);
    for (const condition of conditions(filter)) query = query.where(condition);
    return query;
  };
  const indexed = (filter.types?.length ?? 0) > 0 || filter.messageId !== undefined || filter.since !== undefined || filter.until !== undefined;
  const jsonOnly = !indexed && (filter.actorId !== undefined || filter.channelId !== undefined || filter.userId !== undefined);
  let rows: StoredEvent[] = [];
  if (!jsonOnly) {
    let query = base();
    if (order === 'newest') {
      if (cursor !== undefined) query = query.where('position', '<', cursor);
      query = query.orderBy('position', 'desc');
    } else {
      query = query.where('position', '>', cursor ?? 0).orderBy('position', 'asc');
    }
    rows = (await query.limit(limit + 1).execute()) as unknown as StoredEvent[];
  } else {
    const head = Number((await sql<{ head: string }>`SELECT coalesce(max(position), 0)::int8 AS head FROM events`.execute(db)).rows[0]!.head);
    let width = window;
    if (order === 'newest') {
      // positions in (lower, upper)
      for (let upper = Math.min(cursor ?? head + 1, head + 1); rows.length <= limit && upper > 1; width *= 2) {
        const lower = Math.max(0, upper - width);
        const found = await base().where('position', '>', lower).where('position', '<', upper).orderBy('position', 'desc').limit(limit + 1 - rows.length).execute();
        rows.push(...(found as unknown as StoredEvent[]));
        upper = lower + 1;
      }
    } else {
      // positions in (lower, upper]
      for (let lower = cursor ?? 0; rows.length <= limit && lower < head; width *= 2) {
        const upper = lower + width;
        const found = await base().where('position', '>', lower).where('position', '<=', upper).orderBy('position', 'asc').limit(limit + 1 - rows.length).execute();
        rows.push(...(found as unknown as StoredEvent[]));
        lower = upper;
      }
    }
  }
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const entries = (await open(page)).map(toEntry);
  return { entries, next: more ? entries[entries.length - 1]!.position : null };
}

/** The first window of a walk over the primary key (see logPage). */
const WINDOW = 20_000;

export interface ChartBucket {
  /** start of the hour or day, ISO 8601 */
  start: string;
  count: number;
}

/** Events of the filtered set per hour, or per day when they span more than three days. */
export async function eventsPerPeriod(db: Db, filter: ConsoleFilter): Promise<{ unit: 'hour' | 'day'; buckets: ChartBucket[] }> {
  let query = db
    .selectFrom('events')
    .select([
      // "YYYY-MM-DDTHH" of a toISOString() time: the hour in UTC, without parsing a timestamp per row.
      sql<string>`left(metadata->>'time', 13)`.as('hour'),
      sql<string>`count(*)`.as('count'),
    ]);
  for (const condition of conditions(filter)) query = query.where(condition);
  const rows = await query.groupBy(sql`1`).orderBy(sql`1`).execute();
  const hours = rows
    .filter((r) => /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(r.hour))
    .map((r) => ({ start: `${r.hour}:00:00.000Z`, count: Number(r.count) }));
  if (hours.length === 0) return { unit: 'hour', buckets: [] };
  const span = Date.parse(hours[hours.length - 1]!.start) - Date.parse(hours[0]!.start);
  if (span <= 3 * 24 * 3600 * 1000) return { unit: 'hour', buckets: hours };
  const days = new Map<string, number>();
  for (const h of hours) {
    const day = `${h.start.slice(0, 10)}T00:00:00.000Z`;
    days.set(day, (days.get(day) ?? 0) + h.count);
  }
  return { unit: 'day', buckets: [...days].map(([start, count]) => ({ start, count })) };
}

/** Every event of the filtered set in position order, a batch at a time (for a streamed export). */
export async function* filteredEvents(db: Db, filter: ConsoleFilter, open: EventOpener, batch = 1_000): AsyncGenerator<AuditEntry[]> {
  let after = 0;
  for (;;) {
    const page = await logPage(db, filter, 'position', after, batch, open);
    if (page.entries.length > 0) yield page.entries;
    if (page.next === null) return;
    after = page.next;
  }
}

/** Display names of the users and channels that entries mention (the current ones: the log page is about today's names). */
export async function namesFor(db: Db, entries: readonly AuditEntry[]): Promise<{ users: Map<number, string>; channels: Map<number, string> }> {
  const userIds = new Set<number>();
  const channelIds = new Set<number>();
  for (const entry of entries) {
    const actor = entry.metadata.actor_id;
    if (typeof actor === 'number') userIds.add(actor);
    for (const [key, value] of Object.entries(entry.data)) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value > 2_147_483_647 || value < 0) continue;
      if (USER_FIELDS.has(key)) userIds.add(value);
      if (CHANNEL_FIELDS.has(key)) channelIds.add(value);
    }
  }
  const users = userIds.size === 0 ? [] : await db.selectFrom('users').select(['id', 'full_name']).where('id', 'in', [...userIds]).execute();
  const channels = channelIds.size === 0 ? [] : await db.selectFrom('streams').select(['id', 'name']).where('id', 'in', [...channelIds]).execute();
  return {
    users: new Map(users.map((u) => [u.id, u.full_name])),
    channels: new Map(channels.map((c) => [c.id, c.name])),
  };
}

/** Data fields that hold a user id, a channel id or a message id (the log page links them). */
export const USER_FIELDS = new Set(['user_id', 'sender_id', 'actor_id', 'creator_id', 'bot_owner_id', 'old_bot_owner_id', 'target_user_id', 'acting_user_id']);
export const CHANNEL_FIELDS = new Set(['stream_id', 'new_stream_id', 'old_stream_id']);
export const MESSAGE_FIELDS = new Set(['message_id', 'message_ids']);

/** Event types present in the log (for the type filter's choices); the type index answers it. */
export async function eventTypes(db: Db): Promise<string[]> {
  const { rows } = await sql<{ type: string }>`
    WITH RECURSIVE t(type) AS (
      (SELECT type FROM events ORDER BY type LIMIT 1)
      UNION ALL
      SELECT (SELECT e.type FROM events e WHERE e.type > t.type ORDER BY e.type LIMIT 1) FROM t WHERE t.type IS NOT NULL
    ) SELECT type FROM t WHERE type IS NOT NULL`.execute(db);
  return rows.map((r) => r.type);
}

const LIFE_TYPES = new Set(['MessageSent', 'MessageEdited', 'MessagesDeleted', 'MessagesShredded', 'ReactionAdded', 'ReactionRemoved', 'MessageFlagsChanged']);

/**
 * Every event in a message's life: its own stream (sent, its edits, reactions), and every event
 * that lists it in `message_ids` (a move or deletion of its topic, a shredding, a user's flag
 * change). Two index lookups (the stream's unique index, migration 0180's GIN index), no scan.
 */
export async function messageLifeEvents(db: Db, realmId: number, messageId: number, open: EventOpener): Promise<AuditEntry[]> {
  const { rows } = await sql<StoredEvent>`
    SELECT ${sql.join(EVENT_COLUMNS.map((c) => sql.ref(c)))} FROM events
    WHERE stream_id = ${`message-${messageId}`} AND (metadata->>'realm_id')::int = ${realmId}
    UNION
    SELECT ${sql.join(EVENT_COLUMNS.map((c) => sql.ref(c)))} FROM events
    WHERE data->'message_ids' @> ${JSON.stringify([messageId])}::jsonb AND (metadata->>'realm_id')::int = ${realmId}
    ORDER BY position`.execute(db);
  const wanted = rows.filter((row) => LIFE_TYPES.has(row.type));
  return (await open(wanted)).map(toEntry);
}
