import type { Event } from '../event-types.js';

/** Why personal data was destroyed (the forgotten content itself is never in the event). */
export type ShredReason = 'deleted' | 'purge' | 'retention' | 'erasure';

/**
 * The data keys of these messages were destroyed: their content, earlier versions and topic are
 * unreadable everywhere in the log from now on (and in the past, for replay). Live rows go with it.
 */
export type MessagesShredded = Event<'MessagesShredded', {
  realm_id: number;
  message_ids: number[];
  key_ids: string[];
  reason: ShredReason;
}>;

export type ForgettingEvent = MessagesShredded;
