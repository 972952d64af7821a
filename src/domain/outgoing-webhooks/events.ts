import type { Event } from '../event-types.js';

/**
 * The webhook of an outgoing webhook bot was called about a message that triggered it, and its
 * answer (a reply, notices of a failure, or nothing) was sent: appended once per message and bot,
 * with those messages, on a stream of its own (outgoingWebhookStream), so a second delivery of the
 * same trigger (another process, a retry after a crash) conflicts and sends nothing.
 * outcome: 'replied' (the bot's reply was sent), 'no_reply' (the webhook asked for none), 'failed'
 * (the failure notices were sent), 'skipped' (the message, the bot or its service was gone).
 */
export type OutgoingWebhookCompleted = Event<'OutgoingWebhookCompleted', {
  message_id: number;
  bot_id: number;
  realm_id: number;
  outcome: 'replied' | 'no_reply' | 'failed' | 'skipped';
  /** requests made (a timeout or a connection error is tried again, up to 4 requests in all) */
  attempts: number;
}>;

export type OutgoingWebhookEvent = OutgoingWebhookCompleted;

export const outgoingWebhookStream = (messageId: number, botId: number) => `outgoing-webhook-${messageId}-${botId}`;
