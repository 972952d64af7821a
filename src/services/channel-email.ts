import { createHmac } from 'node:crypto';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import type { UserRow } from '../read/users.js';
import { canReadStreamContent, isSubscribed, type StreamRow } from '../visibility.js';
import { isDbInt } from '../domain/ids.js';

/**
 * The channel name as the real server puts it in a gateway address: every run of characters other
 * than letters, digits and "_" becomes one "-", lower-cased, without a leading or trailing "-".
 */
export function channelEmailSlug(name: string): string {
  return name.replace(/[^\p{L}\p{N}_]+/gu, '-').toLowerCase().replace(/^-+|-+$/g, '');
}

/**
 * A 32-hex token for (user, channel): stable for as long as the user's API key, and unguessable by
 * anyone else (an HMAC keyed by that key), so an address names who posts through it as the
 * real server's per-sender channel addresses do.
 */
export function channelEmailToken(user: Pick<UserRow, 'api_key'>, streamId: number): string {
  return createHmac('sha256', user.api_key).update(`channel-email:${streamId}`).digest('hex').slice(0, 32);
}

/** "<slug>.<token>.show-sender@<host>", the real server's shape (the slug is left out when empty). */
export function channelEmailAddress(stream: Pick<StreamRow, 'id' | 'name'>, user: Pick<UserRow, 'api_key'>, host: string): string {
  const slug = channelEmailSlug(stream.name);
  const token = channelEmailToken(user, stream.id);
  return `${slug === '' ? '' : `${slug}.`}${token}.show-sender@${host}`;
}

/** The channel the user may post through the gateway: one they may access (access_stream_by_id). */
export async function requireAccessibleChannel(db: Db, user: UserRow, streamId: number): Promise<StreamRow> {
  const stream = isDbInt(streamId) ? await db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst() : undefined;
  if (!stream || stream.deactivated) throw errors.invalidChannelId();
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  if (!canReadStreamContent(viewer, stream, await isSubscribed(db, user.id, stream.id))) throw errors.invalidChannelId();
  return stream;
}
