import type { StoredEvent } from './types.js';

/**
 * Upcasters lift an old schema_version of an event type to the next one. Stored rows are never
 * rewritten; readers see every event in its current shape. Keyed by `${type}@${fromVersion}`.
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

const upcasters: Record<string, Upcaster> = {
  // 2: an animated custom emoji names its still image; no emoji had one before.
  'RealmEmojiAdded@1': (data) => ({ ...data, still_path_id: null }),
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
