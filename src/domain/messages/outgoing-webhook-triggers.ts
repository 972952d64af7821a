import type { OutgoingWebhookTrigger } from './events.js';

export interface TriggerInput {
  senderIsBot: boolean;
  /** the active outgoing webhook bots of the organization */
  outgoingWebhookBots: ReadonlySet<number>;
  /** channel message: the users mentioned by name (silent mentions excluded), receivers or not */
  personallyMentioned: readonly number[];
  /** channel message: the receivers mentioned by name or through a group */
  mentionedReceivers: Iterable<number>;
  /** direct message: every participant, sender included; [] for a channel message */
  dmUserIds: readonly number[];
  senderId: number;
}

/**
 * The outgoing webhook bots a message triggers, by the real server's rule (get_service_bot_events):
 * nothing a bot sends triggers anything (no loops of bots answering bots); in a channel, a bot
 * mentioned by name, or through a group while it receives the message; in a direct message (one to
 * one or group), every bot taking part.
 */
export function outgoingWebhookTriggers(input: TriggerInput): OutgoingWebhookTrigger[] {
  if (input.senderIsBot || input.outgoingWebhookBots.size === 0) return [];
  const isBot = (id: number) => input.outgoingWebhookBots.has(id);
  if (input.dmUserIds.length > 0) {
    return input.dmUserIds.filter((id) => id !== input.senderId && isBot(id)).map((bot_id) => ({ bot_id, trigger: 'direct_message' }));
  }
  const mentioned = new Set([...input.personallyMentioned, ...input.mentionedReceivers]);
  return [...mentioned].filter(isBot).sort((a, b) => a - b).map((bot_id) => ({ bot_id, trigger: 'mention' }));
}
