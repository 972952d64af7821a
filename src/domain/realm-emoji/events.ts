import type { Event } from '../event-types.js';

export type RealmEmojiAdded = Event<'RealmEmojiAdded', {
  realm_id: number;
  emoji_id: number;
  name: string;
  author_id: number;
  /** `<emoji_id>.<ext>`: the image's URL is /user_avatars/<realm_id>/emoji/images/<file_name>. */
  file_name: string;
  /** Where the bytes are kept in the upload storage (the same shape as an attachment's path id). */
  path_id: string;
  content_type: string;
}>;

/** Deactivated, never deleted: old messages and reactions still show the image. */
export type RealmEmojiDeactivated = Event<'RealmEmojiDeactivated', { realm_id: number; emoji_id: number; name: string }>;

export type RealmEmojiEvent = RealmEmojiAdded | RealmEmojiDeactivated;
