import type { Event } from '../event-types.js';

/** `words`: what this change added or removed (lower-cased); `alert_words`: the user's whole list afterwards, sorted. */
export type AlertWordsAdded = Event<'AlertWordsAdded', { user_id: number; words: string[]; alert_words: string[] }>;
export type AlertWordsRemoved = Event<'AlertWordsRemoved', { user_id: number; words: string[]; alert_words: string[] }>;

export type AlertWordsEvent = AlertWordsAdded | AlertWordsRemoved;
