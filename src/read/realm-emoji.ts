import type { Db } from '../db/database.js';
import type { RealmEmojiRow } from '../domain/realm-emoji/decider.js';

export async function listRealmEmojiRows(db: Db, realmId: number): Promise<RealmEmojiRow[]> {
  return db
    .selectFrom('realm_emoji')
    .select(['id', 'name', 'author_id', 'file_name', 'deactivated'])
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

export const emojiImageUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;

/** The client form: an object keyed by emoji id (a string), deactivated emoji included. */
export function formatRealmEmoji(realmId: number, rows: readonly RealmEmojiRow[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of rows) {
    // Animated images are stored as uploaded; no still frame is made, so still_url is null.
    out[String(e.id)] = {
      id: String(e.id), name: e.name, source_url: emojiImageUrl(realmId, e.file_name), still_url: null,
      deactivated: e.deactivated, author_id: e.author_id,
    };
  }
  return out;
}

export async function getRealmEmoji(db: Db, realmId: number): Promise<Record<string, Record<string, unknown>>> {
  return formatRealmEmoji(realmId, await listRealmEmojiRows(db, realmId));
}

/** The stored bytes of an emoji image, by the last part of its URL. */
export async function getEmojiImage(db: Db, realmId: number, fileName: string): Promise<{ path_id: string; content_type: string } | undefined> {
  return db
    .selectFrom('realm_emoji')
    .select(['path_id', 'content_type'])
    .where('realm_id', '=', realmId)
    .where('file_name', '=', fileName)
    .executeTakeFirst();
}
