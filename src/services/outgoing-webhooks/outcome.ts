import type { CallOutcome } from './http-call.js';
import { ReplyError, replyFrom, type Reply } from './payload.js';
import { conversationFailure, failures, type OwnerNotice } from './notices.js';

/** A failure's two notices: in the conversation that triggered the bot, and to the bot's owner. */
export interface Failure {
  /** the bot's message where it was triggered (null: none) */
  conversation: string | null;
  /** the notice to the owner, less the link and the bot's name (null: none) */
  owner: Omit<OwnerNotice, 'messageUrl' | 'botName'> | null;
}

/** What the bot does once the webhook has been called: say its reply, say nothing, or report a failure. */
export type Plan =
  | { kind: 'reply'; reply: Reply; responseText: string }
  | { kind: 'nothing' }
  | { kind: 'failure'; failure: Failure };

/** A reply the send path refused (a widget that does not pass, a recipient gone...): reported as the real server does. */
export function replyRefused(error: string, responseText: string): Failure {
  return { conversation: conversationFailure(error), owner: { failureMessage: failures.replyRefused(error), responseContent: responseText } };
}

/**
 * The real server's handling of a call's outcome (do_rest_call): a 2xx answer is read for a reply;
 * another status is reported with its body; a timeout or a connection error, once the retries are
 * used up, makes the bot "unavailable"; any other error is reported with its type.
 */
export function planFor(iface: number, outcome: CallOutcome, command: string, timeoutSeconds: number): Plan {
  switch (outcome.kind) {
    case 'response': {
      if (outcome.status >= 200 && outcome.status < 300) {
        const text = outcome.body.toString('utf8');
        try {
          const reply = replyFrom(iface, text);
          return reply ? { kind: 'reply', reply, responseText: text } : { kind: 'nothing' };
        } catch (error) {
          if (!(error instanceof ReplyError)) throw error;
          return { kind: 'failure', failure: replyRefused(error.message, text) };
        }
      }
      return {
        kind: 'failure',
        failure: { conversation: conversationFailure(failures.status(outcome.status)), owner: { status: outcome.status, responseContent: outcome.body } },
      };
    }
    case 'timeout':
      return { kind: 'failure', failure: { conversation: conversationFailure(failures.unavailable), owner: { failureMessage: failures.timedOut(timeoutSeconds) } } };
    case 'connection':
      return { kind: 'failure', failure: { conversation: conversationFailure(failures.unavailable), owner: { failureMessage: failures.connection } } };
    case 'exception':
      return {
        kind: 'failure',
        failure: { conversation: conversationFailure(failures.exception(outcome.type, command)), owner: { exception: { type: outcome.type, message: outcome.message } } },
      };
    default:
      return outcome satisfies never;
  }
}

/** Timeouts and connection errors are tried again: 1 request and up to 3 retries (MAX_REQUEST_RETRIES). */
export const MAX_ATTEMPTS = 4;
export const isRetried = (outcome: CallOutcome) => outcome.kind === 'timeout' || outcome.kind === 'connection';
