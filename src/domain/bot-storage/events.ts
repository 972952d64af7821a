import type { Event } from '../event-types.js';

/** `storage`: the entries this request set (new keys and replaced values), all strings. */
export type BotStorageSet = Event<'BotStorageSet', { user_id: number; storage: Record<string, string> }>;
export type BotStorageRemoved = Event<'BotStorageRemoved', { user_id: number; keys: string[] }>;

export type BotStorageEvent = BotStorageSet | BotStorageRemoved;
