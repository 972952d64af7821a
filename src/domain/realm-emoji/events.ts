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
  /**
   * Where the still PNG of an animated image is kept (its URL is
   * /user_avatars/<realm_id>/emoji/images/still/<emoji_id>.png); null for an image that is not animated.
   * Since schema version 2; version 1 events are upcast with null (no emoji had a still image then).
   */
  still_path_id: string | null;
}>;

/** The schema version RealmEmojiAdded events are written with: where src/eventstore/upcast.ts's upcasters end. */
export const REALM_EMOJI_ADDED_SCHEMA_VERSION = 2;

/** Deactivated, never deleted: old messages and reactions still show the image. */
export type RealmEmojiDeactivated = Event<'RealmEmojiDeactivated', { realm_id: number; emoji_id: number; name: string }>;

export type RealmEmojiEvent = RealmEmojiAdded | RealmEmojiDeactivated;
