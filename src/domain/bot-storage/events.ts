import type { Event } from '../event-types.js';

/**
 * `storage`: the entries this request set (new keys and replaced values), all strings.
 * `key_generation`: the data key generation `storage` (or `keys`) is sealed under (see
 * personal-fields.ts); absent on events written before storage was sealed. Once the key is
 * destroyed, the sealed field reads as the string '(shredded)'.
 */
export type BotStorageSet = Event<'BotStorageSet', { user_id: number; storage: Record<string, string>; key_generation?: number }>;
export type BotStorageRemoved = Event<'BotStorageRemoved', { user_id: number; keys: string[]; key_generation?: number }>;

/**
 * The bot was deactivated: its storage is gone from the read table and the keys of `key_ids` were
 * destroyed first, so what it stored is unreadable in the log too. A reactivated bot starts empty.
 */
export type BotStorageForgotten = Event<'BotStorageForgotten', { user_id: number; key_ids: string[]; reason: 'bot_deactivated' }>;

export type BotStorageEvent = BotStorageSet | BotStorageRemoved | BotStorageForgotten;
