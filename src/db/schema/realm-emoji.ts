import type { ColumnType } from 'kysely';

/** Table of migration 0060: custom emoji. */
export interface RealmEmojiTable {
  id: number;
  realm_id: number;
  name: string;
  author_id: number | null;
  /** `<id>.<ext>`, the last part of the image URL */
  file_name: string;
  /** where the bytes are in the upload storage */
  path_id: string;
  content_type: string;
  /** where the still PNG of an animated emoji is (migration 0085); null when not animated */
  still_path_id: ColumnType<string | null, string | null | undefined, string | null>;
  deactivated: boolean;
}

export interface RealmEmojiTables {
  realm_emoji: RealmEmojiTable;
}
