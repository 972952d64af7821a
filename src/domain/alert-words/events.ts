import type { Event } from '../event-types.js';

/**
 * `words`: what this change added or removed, as stored (may be empty: the request is recorded anyway);
 * `alert_words`: the user's whole list afterwards, in the order the words were added (events written
 * before that rule list it lower-cased and sorted, which is the order their words were kept in).
 */
export type AlertWordsAdded = Event<'AlertWordsAdded', { user_id: number; words: string[]; alert_words: string[] }>;
export type AlertWordsRemoved = Event<'AlertWordsRemoved', { user_id: number; words: string[]; alert_words: string[] }>;

export type AlertWordsEvent = AlertWordsAdded | AlertWordsRemoved;
