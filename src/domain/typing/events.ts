import type { Event } from '../event-types.js';

/**
 * A typing notification. Like every request it is recorded; no projection folds it, and event
 * queues deliver it only while it is fresh (see src/event-queue/areas/typing.ts).
 * Direct messages name `recipient_ids` (the sender included); channel messages `stream_id` and `topic`.
 */
export type TypingData = {
  sender_id: number;
  realm_id: number;
  message_type: 'direct' | 'stream';
  recipient_ids: number[];
  stream_id: number | null;
  topic: string | null;
};
export type TypingStarted = Event<'TypingStarted', TypingData>;
export type TypingStopped = Event<'TypingStopped', TypingData>;

export type TypingEvent = TypingStarted | TypingStopped;
