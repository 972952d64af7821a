import type { Db } from './db/database.js';
import type { Selectable } from 'kysely';
import type { StreamsTable } from './db/schema.js';
import { Role, isAdminRole } from './domain/roles.js';

/**
 * Who may see what, in one place. Reads (src/read/*) and event queues (src/event-queue/*) both ask
 * here; nothing else decides visibility.
 */
export interface Viewer {
  user_id: number;
  role: number;
  realm_id: number;
}

export type StreamRow = Selectable<StreamsTable>;

// ---- Spectators ----

/**
 * A spectator (the real server's AnonymousUser: someone without an account reading web-public
 * channels) as a viewer: id 0, which no account has (ids come from sequences starting at 1), and a
 * guest's role, as the real server's stand-in for spectators has. Everything that decides what a
 * viewer sees asks isSpectator first where a spectator's rule differs.
 */
export const SPECTATOR_ID = 0;

export function spectatorViewer(realmId: number): Viewer {
  return { user_id: SPECTATOR_ID, role: Role.GUEST, realm_id: realmId };
}

export const isSpectator = (viewer: Viewer): boolean => viewer.user_id === SPECTATOR_ID;

/**
 * Web-public channels are readable by spectators only while the server setting
 * (WEB_PUBLIC_STREAMS_ENABLED) and the organization's enable_spectator_access are both on
 * (the real server's Realm.web_public_streams_enabled).
 */
export function spectatorAccessEnabled(realm: { properties: unknown }, serverSetting: boolean): boolean {
  return serverSetting && (realm.properties as Record<string, unknown>).enable_spectator_access === true;
}

/**
 * A channel a spectator may read: web-public, not archived, public and with public history (the
 * real server's get_web_public_streams_queryset, which asks for all four rather than trust
 * is_web_public to imply the others). webPublicStreamIdsSql is the same rule in SQL.
 */
export function isWebPublicStream(stream: StreamRow): boolean {
  return stream.is_web_public && !stream.deactivated && !stream.invite_only && stream.history_public_to_subscribers;
}

export async function isSubscribed(db: Db, userId: number, streamId: number): Promise<boolean> {
  const row = await db
    .selectFrom('subscriptions')
    .select('active')
    .where('user_id', '=', userId)
    .where('stream_id', '=', streamId)
    .executeTakeFirst();
  return row?.active === true;
}

/** May the viewer know the channel exists (name, description, metadata)? */
export function canSeeStreamMetadata(viewer: Viewer, stream: StreamRow, subscribed: boolean): boolean {
  if (stream.realm_id !== viewer.realm_id) return false;
  if (isSpectator(viewer)) return isWebPublicStream(stream);
  if (subscribed) return true;
  if (viewer.role === Role.GUEST) return stream.is_web_public;
  if (!stream.invite_only) return true;
  // Administrators see private channels' metadata, not their content.
  return isAdminRole(viewer.role);
}

/** May the viewer read the channel's messages (history rules are applied per message by the caller)? */
export function canReadStreamContent(viewer: Viewer, stream: StreamRow, subscribed: boolean): boolean {
  if (stream.realm_id !== viewer.realm_id) return false;
  if (isSpectator(viewer)) return isWebPublicStream(stream);
  if (subscribed) return true;
  if (stream.invite_only) return false;
  return viewer.role !== Role.GUEST || stream.is_web_public;
}

/** Users who are active subscribers of a channel. */
export async function subscriberIds(db: Db, streamId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions')
    .select('user_id')
    .where('stream_id', '=', streamId)
    .where('active', '=', true)
    .execute();
  return rows.map((r) => r.user_id);
}

/**
 * May the viewer see who is subscribed to the channel? Web-public channels: anyone in the realm
 * (they could subscribe freely); guests otherwise only to their own channels; administrators to
 * every channel; others to public channels and private ones they are subscribed to.
 */
export function canSeeSubscribers(viewer: Viewer, stream: StreamRow, subscribed: boolean): boolean {
  if (stream.realm_id !== viewer.realm_id) return false;
  // The real server refuses include_subscribers to spectators.
  if (isSpectator(viewer)) return false;
  if (stream.is_web_public) return true;
  if (viewer.role === Role.GUEST) return subscribed;
  if (isAdminRole(viewer.role)) return true;
  return !stream.invite_only || subscribed;
}

/** May the viewer subscribe themself (or be the one adding others)? Subscribers, web-public, or public for non-guests. */
export function canJoinStream(viewer: Viewer, stream: StreamRow, subscribed: boolean): boolean {
  if (stream.realm_id !== viewer.realm_id || stream.deactivated || isSpectator(viewer)) return false;
  if (subscribed || stream.is_web_public) return true;
  return !stream.invite_only && viewer.role !== Role.GUEST;
}

// ---- Messages ----
// (imports are hoisted; kept here so this section stays an append)
import { sql, type RawBuilder } from 'kysely';

/** A private channel whose history is not public to subscribers: only what a user received is readable. */
export function streamHistoryIsProtected(stream: StreamRow): boolean {
  return stream.invite_only && !stream.history_public_to_subscribers;
}

/**
 * May the viewer read this message somewhere? `received`: the viewer was subscribed when it was sent (or is a
 * participant / its sender); `subscribed`: the viewer is subscribed now. Having once received a message is
 * enough here: what a user received stays in their history (GET /messages) and so do its uploads.
 */
export function canReadMessage(
  viewer: Viewer,
  message: { realm_id: number; stream_id: number | null; sender_id: number },
  access: MessageAccessFacts,
): boolean {
  if (message.realm_id !== viewer.realm_id) return false;
  if (isSpectator(viewer)) return spectatorMayRead(viewer, message, access);
  if (message.stream_id === null) return access.dmParticipant;
  if (access.received) return true;
  const stream = access.stream;
  if (!stream) return false;
  if (!canReadStreamContent(viewer, stream, access.subscribed)) return false;
  return !streamHistoryIsProtected(stream);
}

export interface MessageAccessFacts {
  stream?: StreamRow;
  subscribed: boolean;
  received: boolean;
  dmParticipant: boolean;
}

/**
 * May the viewer reach this one message by its id (GET /messages/{id}, its history, read receipts,
 * submessages, editing, deleting)? The real server's rule asks for rights now, not once: a direct message
 * for its participants; a channel message in a public channel for any member but a guest; otherwise for a
 * subscriber now who, where history is protected, also received it. A former subscriber keeps what they
 * received in GET /messages, but not here.
 */
export function canAccessMessage(
  viewer: Viewer,
  message: { realm_id: number; stream_id: number | null },
  access: MessageAccessFacts,
): boolean {
  if (message.realm_id !== viewer.realm_id) return false;
  if (isSpectator(viewer)) return spectatorMayRead(viewer, message, access);
  if (message.stream_id === null) return access.dmParticipant;
  const stream = access.stream;
  if (!stream || stream.realm_id !== viewer.realm_id) return false;
  if (!stream.invite_only && viewer.role !== Role.GUEST) return true;
  if (!access.subscribed) return false;
  return !streamHistoryIsProtected(stream) || access.received;
}

/**
 * May the viewer act on this message (react to it)? canAccessMessage's rule, and nothing in an archived
 * channel (the real server's check for changing a message).
 */
export function canModifyMessage(
  viewer: Viewer,
  message: { realm_id: number; stream_id: number | null },
  access: MessageAccessFacts,
): boolean {
  // A spectator reads; nothing a spectator does changes anything.
  if (isSpectator(viewer)) return false;
  if (message.stream_id !== null && (!access.stream || access.stream.deactivated)) return false;
  return canAccessMessage(viewer, message, access);
}

/** A spectator reads a message in a web-public channel of the organization, and nothing else (no direct message). */
function spectatorMayRead(viewer: Viewer, message: { realm_id: number; stream_id: number | null }, access: MessageAccessFacts): boolean {
  const stream = access.stream;
  return message.stream_id !== null && stream !== undefined && stream.id === message.stream_id
    && stream.realm_id === viewer.realm_id && isWebPublicStream(stream);
}

/** Ids of the organization's channels a spectator may read (isWebPublicStream), as a subquery. */
export function webPublicStreamIdsSql(realmId: number): RawBuilder<unknown> {
  return sql`(SELECT st.id FROM streams st WHERE st.realm_id = ${realmId} AND st.is_web_public
    AND NOT st.deactivated AND NOT st.invite_only AND st.history_public_to_subscribers)`;
}

/** Users who received a channel message (subscribed when it was sent): the audience of its events. */
export async function messageReceiverIds(db: Db, streamId: number, messageId: number): Promise<number[]> {
  const { rows } = await sql<{ ids: number[] | null }>`SELECT ${messageReceiversJsonSql(streamId, messageId)} AS ids`.execute(db);
  return rows[0]?.ids ?? [];
}

/** The same as a JSON array expression, to fold into a larger query. */
export function messageReceiversJsonSql(streamId: number, messageId: number): RawBuilder<unknown> {
  return sql`(SELECT json_agg(DISTINCT s.user_id) FROM message_reception_spans s
    WHERE s.stream_id = ${streamId} AND s.from_id <= ${messageId} AND (s.to_id IS NULL OR s.to_id >= ${messageId}))`;
}

/** Users who received any of the channel's messages in [minId, maxId] (events about several messages). */
export async function messageRangeReceiverIds(db: Db, streamId: number, minId: number, maxId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('message_reception_spans')
    .select('user_id')
    .distinct()
    .where('stream_id', '=', streamId)
    .where('from_id', '<=', maxId)
    .where((eb) => eb.or([eb('to_id', 'is', null), eb('to_id', '>=', minId)]))
    .execute();
  return rows.map((r) => r.user_id);
}
