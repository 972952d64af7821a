import type { Event } from '../event-types.js';

/**
 * A scheduled message as stored: what the client sees (see toClientScheduledMessage) plus what
 * delivery needs (sender, client, read_by_sender). `to` is the channel id, or for a direct message
 * the other participants (the sender alone for a message to themself).
 */
export interface ScheduledMessageData {
  id: number;
  realm_id: number;
  sender_id: number;
  type: 'stream' | 'private';
  stream_id: number | null;
  to: number[];
  topic: string;
  content: string;
  rendered_content: string;
  /** UNIX seconds */
  scheduled_timestamp: number;
  read_by_sender: boolean;
  /** the client that scheduled or last edited it; the delivered message is sent as from it */
  client: string;
}

export type ScheduledMessageCreated = Event<'ScheduledMessageCreated', { scheduled_message: ScheduledMessageData }>;
/** Edited: the whole message as it is now (an edit also clears an earlier failure). */
export type ScheduledMessageEdited = Event<'ScheduledMessageEdited', { scheduled_message: ScheduledMessageData }>;
export type ScheduledMessageDeleted = Event<'ScheduledMessageDeleted', { sender_id: number; scheduled_message_id: number }>;
/** Appended in the same append as the MessageSent of `message_id`, so a message is sent at most once. */
export type ScheduledMessageDelivered = Event<'ScheduledMessageDelivered', { sender_id: number; scheduled_message_id: number; message_id: number }>;
/** The send at the scheduled time failed; the message stays, marked failed, until edited or deleted. */
export type ScheduledMessageFailed = Event<'ScheduledMessageFailed', {
  scheduled_message: ScheduledMessageData;
  failure_message: string;
  /** false when the sender is deactivated: the real server tells nobody then */
  notify: boolean;
}>;

export type ScheduledMessageEvent =
  | ScheduledMessageCreated
  | ScheduledMessageEdited
  | ScheduledMessageDeleted
  | ScheduledMessageDelivered
  | ScheduledMessageFailed;
