import { currentUnicodeEmojiName } from '../emoji/catalogue.js';
import type { StoredEvent } from './types.js';

/**
 * Upcasters lift an old schema_version of an event type to the next one. Stored rows are never
 * rewritten; readers see every event in its current shape. Keyed by `${type}@${fromVersion}`.
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

// Version 1 reactions and status emoji took their Unicode names from another table (emojibase), where e.g.
// "smile" was U+1F604; from version 2 names are the real server's (src/emoji). A stored name that no longer
// names its code reads as the code's canonical name. Codes (what identifies a reaction) are never changed.
const currentEmojiName: Upcaster = (data) =>
  data.reaction_type === 'unicode_emoji' && typeof data.emoji_code === 'string' && typeof data.emoji_name === 'string'
    ? { ...data, emoji_name: currentUnicodeEmojiName(data.emoji_code, data.emoji_name) }
    : data;

const upcasters: Record<string, Upcaster> = {
  // 2: an animated custom emoji names its still image; no emoji had one before.
  'RealmEmojiAdded@1': (data) => ({ ...data, still_path_id: null }),
  'ReactionAdded@1': currentEmojiName,
  'ReactionRemoved@1': currentEmojiName,
  'UserStatusChanged@1': currentEmojiName,
};

export function registerUpcaster(type: string, fromVersion: number, upcaster: Upcaster): void {
  upcasters[`${type}@${fromVersion}`] = upcaster;
}

/** The version an event of `type` is written with: the one its chain of upcasters ends at. */
export function currentSchemaVersion(type: string): number {
  let version = 1;
  while (upcasters[`${type}@${version}`]) version += 1;
  return version;
}

export function upcast(event: StoredEvent): StoredEvent {
  let current = event;
  for (;;) {
    const step = upcasters[`${current.type}@${current.schema_version}`];
    if (!step) return current;
    current = { ...current, data: step(current.data), schema_version: current.schema_version + 1 };
  }
}
