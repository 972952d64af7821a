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
  if (subscribed) return true;
  if (viewer.role === Role.GUEST) return stream.is_web_public;
  if (!stream.invite_only) return true;
  // Administrators see private channels' metadata, not their content.
  return isAdminRole(viewer.role);
}

/** May the viewer read the channel's messages (history rules are applied per message by the caller)? */
export function canReadStreamContent(viewer: Viewer, stream: StreamRow, subscribed: boolean): boolean {
  if (stream.realm_id !== viewer.realm_id) return false;
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
