import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { AlertWordsEvent } from './events.js';

/** The real server's limit on one alert word (or phrase), counted before trimming. */
export const MAX_ALERT_WORD_LENGTH = 100;

export type AlertWordsCommand =
  | { type: 'AddAlertWords'; user_id: number; words: string[] }
  | { type: 'RemoveAlertWords'; user_id: number; words: string[] };

/** The user's current list in the order the words were added, folded from their alert-word stream. */
export interface AlertWordsState {
  alert_words: string[];
}

export function evolveAlertWords(state: AlertWordsState, event: AlertWordsEvent): AlertWordsState {
  return { alert_words: [...event.data.alert_words] };
}

const key = (word: string) => word.toLowerCase();

/**
 * Pure. As on the real server: words keep the case they were typed in and their order, are trimmed,
 * blank ones are dropped, and a word already there in any case is not added again (of several
 * spellings in one request the last one wins). Removal matches case-insensitively. Every request
 * is recorded, changed or not, so every client hears the list again.
 */
export function decideAlertWords(command: AlertWordsCommand, state: AlertWordsState): AlertWordsEvent[] {
  const user_id = command.user_id;
  switch (command.type) {
    case 'AddAlertWords': {
      command.words.forEach((raw, i) => {
        if (raw.length > MAX_ALERT_WORD_LENGTH) {
          throw errors.badRequest(`alert_words[${i}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
        }
      });
      const existing = new Set(state.alert_words.map(key));
      const added = new Map<string, string>();
      for (const word of command.words.map((w) => w.trim())) {
        if (word === '' || existing.has(key(word))) continue;
        added.set(key(word), word);
      }
      const words = [...added.values()];
      return [{ type: 'AlertWordsAdded', data: { user_id, words, alert_words: [...state.alert_words, ...words] } }];
    }
    case 'RemoveAlertWords': {
      const doomed = new Set(command.words.map(key));
      const words = state.alert_words.filter((w) => doomed.has(key(w)));
      const alert_words = state.alert_words.filter((w) => !doomed.has(key(w)));
      return [{ type: 'AlertWordsRemoved', data: { user_id, words, alert_words } }];
    }
    default:
      return assertNever(command);
  }
}
