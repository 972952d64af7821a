import type { Db } from '../db/database.js';
import type { RealmEmojiRow } from '../domain/realm-emoji/decider.js';

export async function listRealmEmojiRows(db: Db, realmId: number): Promise<RealmEmojiRow[]> {
  return db
    .selectFrom('realm_emoji')
    .select(['id', 'name', 'author_id', 'file_name', 'still_path_id', 'deactivated'])
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

export const emojiImageUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;

/** The still image's file name: the emoji's file name with .png for its extension, as on the real server. */
export const stillFileName = (fileName: string) => `${fileName.replace(/\.[^.]*$/, '')}.png`;

/** Where the real server serves the still first frame of an animated emoji (its STILL_PATH_ID_TEMPLATE). */
export const emojiStillUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/still/${stillFileName(fileName)}`;

/** The client form: an object keyed by emoji id (a string), deactivated emoji included. */
export function formatRealmEmoji(realmId: number, rows: readonly RealmEmojiRow[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of rows) {
    out[String(e.id)] = {
      id: String(e.id), name: e.name, source_url: emojiImageUrl(realmId, e.file_name),
      still_url: e.still_path_id === null ? null : emojiStillUrl(realmId, e.file_name),
      deactivated: e.deactivated, author_id: e.author_id,
    };
  }
  return out;
}

export async function getRealmEmoji(db: Db, realmId: number): Promise<Record<string, Record<string, unknown>>> {
  return formatRealmEmoji(realmId, await listRealmEmojiRows(db, realmId));
}

/** Where the original upload of an emoji is kept, beside its resized image (the real server's `<file>.original`). */
export const originalPathId = (pathId: string) => `${pathId}.original`;

/**
 * The stored bytes of an emoji image by the last part of its URL: `<id>.<ext>` (the resized image),
 * `<id>.<ext>.original` (the upload as it came, as on the real server; none for emoji added before
 * it was kept) or, with `still`, `<id>.png` (the still image of an animated emoji).
 */
export async function getEmojiImage(
  db: Db,
  realmId: number,
  fileName: string,
  still = false,
): Promise<{ path_id: string; content_type: string } | undefined> {
  const original = !still && fileName.endsWith('.original');
  // A still image is named for the emoji's file name, with .png for its extension.
  const stillOf = still ? /^(\d{1,9})\.png$/.exec(fileName) : null;
  if (still && !stillOf) return undefined;
  let query = db
    .selectFrom('realm_emoji')
    .select(['file_name', 'path_id', 'content_type', 'still_path_id'])
    .where('realm_id', '=', realmId);
  query = stillOf
    ? query.where('id', '=', Number(stillOf[1]))
    : query.where('file_name', '=', original ? fileName.slice(0, -'.original'.length) : fileName);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  if (still) return row.still_path_id === null ? undefined : { path_id: row.still_path_id, content_type: 'image/png' };
  return { path_id: original ? originalPathId(row.path_id) : row.path_id, content_type: row.content_type };
}
