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

/** An owner put a channel or a person on legal hold, or lifted it. */
export type LegalHoldChanged = Event<'LegalHoldChanged', {
  realm_id: number;
  scope: 'channel' | 'user';
  subject_id: number;
  held: boolean;
  reason: string | null;
}>;

export type ForgettingEvent = MessagesShredded | LegalHoldChanged;
