import type { DataOf } from '../domain/events.js';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { SubscriptionsTable } from '../db/schema.js';
import { StreamPostPolicy, canonicalStreamName } from '../domain/channels/decider.js';
import { canSeeStreamMetadata, canSeeSubscribers, type StreamRow, type Viewer } from '../visibility.js';
import { receivedSql } from './narrow.js';

export type SubscriptionRow = Selectable<SubscriptionsTable>;

/** The Channel object of GET /streams, GET /streams/{id} and stream create events. */
export function formatStream(stream: StreamRow, weeklyTraffic: number | null): Record<string, unknown> {
  return {
    stream_id: stream.id,
    name: stream.name,
    description: stream.description,
    rendered_description: stream.rendered_description,
    date_created: Number(stream.date_created),
    creator_id: stream.creator_id,
    invite_only: stream.invite_only,
    is_web_public: stream.is_web_public,
    stream_post_policy: stream.stream_post_policy,
    message_retention_days: stream.message_retention_days,
    history_public_to_subscribers: stream.history_public_to_subscribers,
    first_message_id: stream.first_message_id,
    is_announcement_only: stream.stream_post_policy === StreamPostPolicy.ADMINS,
    can_remove_subscribers_group: stream.can_remove_subscribers_group,
    stream_weekly_traffic: weeklyTraffic,
  };
}

/** A subscription entry: the channel plus the user's personal settings for it. */
export function formatSubscription(
  stream: StreamRow,
  sub: SubscriptionRow,
  weeklyTraffic: number | null,
  subscribers?: number[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...formatStream(stream, weeklyTraffic),
    color: sub.color,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    pin_to_top: sub.pin_to_top,
    desktop_notifications: sub.desktop_notifications,
    email_notifications: sub.email_notifications,
    push_notifications: sub.push_notifications,
    audible_notifications: sub.audible_notifications,
    wildcard_mentions_notify: sub.wildcard_mentions_notify,
  };
  if (subscribers) out.subscribers = subscribers;
  return out;
}

/** Ids are PostgreSQL integers: anything outside that range names nothing (and must not reach a query). */
export const isDbId = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

export async function getStreamById(db: Db, streamId: number): Promise<StreamRow | undefined> {
  if (!isDbId(streamId)) return undefined;
  return db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst();
}

export async function getActiveStreamByName(db: Db, realmId: number, name: string): Promise<StreamRow | undefined> {
  return db
    .selectFrom('streams')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('deactivated', '=', false)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', canonicalStreamName(name).toLowerCase()))
    .executeTakeFirst();
}

export async function listActiveStreams(db: Db, realmId: number): Promise<StreamRow[]> {
  return db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).where('deactivated', '=', false).orderBy('name').execute();
}

/** The organization's channels a spectator may read (isWebPublicStream), by id. */
export async function listWebPublicStreams(db: Db, realmId: number): Promise<StreamRow[]> {
  return webPublicStreamsQuery(db, realmId).selectAll().orderBy('id').execute();
}

/**
 * Whether spectators have anything to read: the real server admits them only to an organization
 * with a web-public channel (Realm.allow_web_public_streams_access), beside the two settings.
 */
export async function hasWebPublicStreams(db: Db, realmId: number): Promise<boolean> {
  return (await webPublicStreamsQuery(db, realmId).select('id').limit(1).executeTakeFirst()) !== undefined;
}

function webPublicStreamsQuery(db: Db, realmId: number) {
  return db
    .selectFrom('streams')
    .where('realm_id', '=', realmId)
    .where('is_web_public', '=', true)
    .where('deactivated', '=', false)
    .where('invite_only', '=', false)
    .where('history_public_to_subscribers', '=', true);
}

export async function getSubscription(db: Db, userId: number, streamId: number): Promise<SubscriptionRow | undefined> {
  if (!isDbId(userId) || !isDbId(streamId)) return undefined;
  return db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).where('stream_id', '=', streamId).executeTakeFirst();
}

export async function subscriptionsOfUser(db: Db, userId: number): Promise<SubscriptionRow[]> {
  return db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).execute();
}

/** Active subscribers (active accounts only) of the given channels, by channel id, sorted. */
export async function subscribersByStream(db: Db, streamIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(streamIds.map((id) => [id, []]));
  if (streamIds.length === 0) return out;
  const rows = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.stream_id', 's.user_id'])
    .where('s.stream_id', 'in', streamIds)
    .where('s.active', '=', true)
    .where('u.is_active', '=', true)
    .orderBy('s.user_id')
    .execute();
  for (const row of rows) out.get(row.stream_id)!.push(row.user_id);
  return out;
}

/**
 * Average messages per week over the last four weeks, rounded; null while the channel is younger
 * than a week (too little data for an estimate, as the real server does).
 */
export async function weeklyTraffic(db: Db, streams: StreamRow[], nowSeconds: number): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  const week = 7 * 24 * 3600;
  const old = streams.filter((s) => nowSeconds - Number(s.date_created) >= week);
  for (const s of streams) out.set(s.id, null);
  if (old.length === 0) return out;
  const since = nowSeconds - 4 * week;
  const { rows } = await sql<{ stream_id: number; n: string }>`
    SELECT stream_id, count(*) AS n FROM messages
    WHERE stream_id IN (${sql.join(old.map((s) => s.id))}) AND date_sent >= ${since}
    GROUP BY stream_id`.execute(db);
  const counts = new Map(rows.map((r) => [Number(r.stream_id), Number(r.n)]));
  for (const s of old) {
    const age = Math.min(4 * week, nowSeconds - Number(s.date_created));
    const weeks = Math.max(1, Math.floor(age / week));
    out.set(s.id, Math.round((counts.get(s.id) ?? 0) / weeks));
  }
  return out;
}

export interface SubscriptionLists {
  subscriptions: Record<string, unknown>[];
  unsubscribed: Record<string, unknown>[];
  never_subscribed: Record<string, unknown>[];
}

/** The three lists of /register's `subscription` section (and GET /users/me/subscriptions). */
export async function gatherSubscriptions(db: Db, viewer: Viewer, includeSubscribers: boolean, nowSeconds: number): Promise<SubscriptionLists> {
  const streams = await listActiveStreams(db, viewer.realm_id);
  const subs = new Map((await subscriptionsOfUser(db, viewer.user_id)).map((s) => [s.stream_id, s]));
  const traffic = await weeklyTraffic(db, streams, nowSeconds);
  const visible = streams.filter((s) => canSeeStreamMetadata(viewer, s, subs.get(s.id)?.active === true));
  const subscribers = includeSubscribers ? await subscribersByStream(db, visible.map((s) => s.id)) : new Map<number, number[]>();
  const lists: SubscriptionLists = { subscriptions: [], unsubscribed: [], never_subscribed: [] };
  for (const stream of visible) {
    const sub = subs.get(stream.id);
    const subscribed = sub?.active === true;
    const peers = includeSubscribers && canSeeSubscribers(viewer, stream, subscribed) ? subscribers.get(stream.id) ?? [] : undefined;
    if (sub) {
      (subscribed ? lists.subscriptions : lists.unsubscribed).push(formatSubscription(stream, sub, traffic.get(stream.id) ?? null, peers));
    } else {
      const entry = formatStream(stream, traffic.get(stream.id) ?? null);
      if (peers) entry.subscribers = peers;
      lists.never_subscribed.push(entry);
    }
  }
  return lists;
}

/**
 * Topics of a channel with their latest message id, newest first. With `receivedBy` (a channel
 * with protected history) only messages that user received count (reception spans, corrected by
 * message_moved_receptions for messages moved in, and their own messages).
 */
export async function streamTopics(db: Db, streamId: number, receivedBy: number | null): Promise<Array<{ name: string; max_id: number }>> {
  // The history narrows' test, so messages moved in follow message_moved_receptions there too.
  const received = receivedBy === null ? sql`TRUE` : receivedSql(receivedBy);
  const { rows } = await sql<{ name: string; max_id: number }>`
    SELECT DISTINCT ON (lower(m.topic)) m.topic AS name, m.id AS max_id
    FROM messages m WHERE m.stream_id = ${streamId} AND ${received}
    ORDER BY lower(m.topic), m.id DESC`.execute(db);
  return rows.map((r) => ({ name: r.name, max_id: Number(r.max_id) })).sort((a, b) => b.max_id - a.max_id);
}

/** The streams row a StreamCreated event makes (the projection's insert and event previews agree). */
export function streamRowFromCreated(d: DataOf<'StreamCreated'>, version = 1): StreamRow {
  return {
    id: d.stream_id,
    realm_id: d.realm_id,
    name: d.name,
    description: d.description,
    rendered_description: d.rendered_description,
    invite_only: d.invite_only,
    is_web_public: d.is_web_public,
    history_public_to_subscribers: d.history_public_to_subscribers,
    stream_post_policy: d.stream_post_policy,
    message_retention_days: d.message_retention_days,
    can_remove_subscribers_group: d.can_remove_subscribers_group,
    creator_id: d.creator_id,
    date_created: d.date_created,
    first_message_id: null,
    is_default: d.is_default,
    deactivated: false,
    version,
  };
}
