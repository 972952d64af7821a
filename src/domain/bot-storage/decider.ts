import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { BotStorageEvent } from './events.js';

/** The real server's BOT_STORAGE_SIZE_LIMIT: characters of keys plus values, per user. */
export const BOT_STORAGE_SIZE_LIMIT = 10_000_000;

export type BotStorageCommand =
  | { type: 'SetBotStorage'; user_id: number; storage: Record<string, string> }
  | { type: 'RemoveBotStorage'; user_id: number; keys: string[] };

/**
 * What the decision needs of the user's storage: its whole size and the size (key plus value) of
 * each entry that exists among the keys the command names.
 */
export interface BotStorageState {
  total_size: number;
  existing: ReadonlyMap<string, number>;
}

/** Characters as the real server counts them (code points, not UTF-16 units). */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export const entrySize = (key: string, value: string) => characterCount(key) + characterCount(value);

export function decideBotStorage(command: BotStorageCommand, state: BotStorageState): BotStorageEvent[] {
  const user_id = command.user_id;
  switch (command.type) {
    case 'SetBotStorage': {
      const entries = Object.entries(command.storage);
      if (entries.length === 0) return [];
      let size = state.total_size;
      for (const [key, value] of entries) size += entrySize(key, value) - (state.existing.get(key) ?? 0);
      if (size > BOT_STORAGE_SIZE_LIMIT) {
        throw errors.badRequest(
          `Request exceeds storage limit by ${size - BOT_STORAGE_SIZE_LIMIT} characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`,
        );
      }
      return [{ type: 'BotStorageSet', data: { user_id, storage: Object.fromEntries(entries) } }];
    }
    case 'RemoveBotStorage': {
      const keys = [...new Set(command.keys)];
      // As the real server counts: the entries found must be as many as the keys named, repeats included.
      if (keys.length < command.keys.length || keys.some((key) => !state.existing.has(key))) throw errors.badRequest('Key does not exist.');
      if (keys.length === 0) return [];
      return [{ type: 'BotStorageRemoved', data: { user_id, keys } }];
    }
    default:
      return assertNever(command);
  }
}
