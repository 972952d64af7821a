import { currentUnicodeEmojiName } from '../emoji/catalogue.js';
import type { Db } from '../db/database.js';

/**
 * The /register `user_status` dictionary, as the real server's get_user_status_dict: users with a
 * status row, keyed by id; `away` (= !presence_enabled) and only the fields that are set. Rows
 * with nothing to show are left out.
 */
export async function realmUserStatus(db: Db, realmId: number): Promise<Record<string, Record<string, unknown>>> {
  const rows = await db
    .selectFrom('user_status as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.status_text', 's.emoji_name', 's.emoji_code', 's.reaction_type', 'u.settings'])
    .where('s.realm_id', '=', realmId)
    .where('u.is_active', '=', true)
    .execute();
  const out: Record<string, Record<string, unknown>> = {};
  for (const row of rows) {
    const away = (row.settings as Record<string, unknown>).presence_enabled === false;
    const entry: Record<string, unknown> = {};
    if (away) entry.away = true;
    if (row.status_text) entry.status_text = row.status_text;
    // Rows folded from version 1 events before the upcaster existed may hold the old table's names.
    const name = row.reaction_type === 'unicode_emoji' && row.emoji_name ? currentUnicodeEmojiName(row.emoji_code, row.emoji_name) : row.emoji_name;
    if (name) Object.assign(entry, { emoji_name: name, emoji_code: row.emoji_code, reaction_type: row.reaction_type });
    if (Object.keys(entry).length > 0 || row.emoji_code || row.reaction_type !== 'unicode_emoji') out[String(row.user_id)] = entry;
  }
  return out;
}
