import type { Event } from '../event-types.js';

/**
 * POST /submessage: a vote, a new option, a strike... attached to a message. `content` is the
 * client's JSON text as sent (sealed under the message's key, so shredding the message forgets it).
 */
export type SubmessageAdded = Event<'SubmessageAdded', {
  submessage_id: number;
  message_id: number;
  realm_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}>;

export type SubmessageEvent = SubmessageAdded;
