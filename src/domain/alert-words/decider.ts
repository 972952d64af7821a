import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { AlertWordsEvent } from './events.js';

/** The real server's limit on one alert word (or phrase). */
export const MAX_ALERT_WORD_LENGTH = 100;

export type AlertWordsCommand =
  | { type: 'AddAlertWords'; user_id: number; words: string[] }
  | { type: 'RemoveAlertWords'; user_id: number; words: string[] };

/** The user's current list, folded from their alert-word stream. */
export interface AlertWordsState {
  alert_words: string[];
}

export function evolveAlertWords(state: AlertWordsState, event: AlertWordsEvent): AlertWordsState {
  return { alert_words: [...event.data.alert_words] };
}

const normalize = (word: string) => word.trim().toLowerCase();
const sorted = (words: Iterable<string>) => [...words].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** Pure: words are matched case-insensitively, so they are kept lower-cased; duplicates are ignored. */
export function decideAlertWords(command: AlertWordsCommand, state: AlertWordsState): AlertWordsEvent[] {
  const current = new Set(state.alert_words);
  const user_id = command.user_id;
  switch (command.type) {
    case 'AddAlertWords': {
      const added: string[] = [];
      command.words.forEach((raw, i) => {
        const word = normalize(raw);
        if (word === '') throw errors.badRequest(`alert_words[${i}] is empty`);
        if (raw.trim().length > MAX_ALERT_WORD_LENGTH) {
          throw errors.badRequest(`alert_words[${i}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
        }
        if (!current.has(word) && !added.includes(word)) added.push(word);
      });
      if (added.length === 0) return [];
      return [{ type: 'AlertWordsAdded', data: { user_id, words: added, alert_words: sorted([...current, ...added]) } }];
    }
    case 'RemoveAlertWords': {
      const removed = [...new Set(command.words.map(normalize))].filter((w) => current.has(w));
      if (removed.length === 0) return [];
      for (const word of removed) current.delete(word);
      return [{ type: 'AlertWordsRemoved', data: { user_id, words: removed, alert_words: sorted(current) } }];
    }
    default:
      return assertNever(command);
  }
}
