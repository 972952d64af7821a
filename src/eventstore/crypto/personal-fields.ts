/**
 * Which fields of which event types hold personal data, and under which data key each event's
 * values are sealed. A message's content, rendered content, earlier versions and topic go under the
 * message's own key, so shredding one message destroys exactly those values.
 */
export interface SealingRule {
  /** The key's id for this event's data; null: nothing to seal in this event. */
  keyOf(data: Record<string, unknown>): KeyScope | null;
  readonly fields: readonly string[];
}

export interface KeyScope {
  readonly keyId: string;
  readonly scope: 'message' | 'user' | 'upload';
  readonly subject: string;
}

export const messageKeyId = (messageId: number) => `message:${messageId}`;
export const messageKey = (messageId: number): KeyScope => ({ keyId: messageKeyId(messageId), scope: 'message', subject: String(messageId) });

const firstMessageId = (data: Record<string, unknown>): number | null => {
  const ids = data.message_ids;
  return Array.isArray(ids) && typeof ids[0] === 'number' ? ids[0] : null;
};

export const SEALING_RULES: Readonly<Record<string, SealingRule>> = {
  MessageSent: {
    keyOf: (d) => (typeof d.message_id === 'number' ? messageKey(d.message_id) : null),
    fields: ['content', 'rendered_content', 'topic'],
  },
  // A topic move covering many messages seals its topic names under the edited message's key.
  MessageEdited: {
    keyOf: (d) => (typeof d.message_id === 'number' ? messageKey(d.message_id) : null),
    fields: ['content', 'rendered_content', 'prev_content', 'prev_rendered_content', 'orig_topic', 'new_topic'],
  },
  // A batch deletion (a topic) names the topic once: under the key of its first message.
  MessagesDeleted: {
    keyOf: (d) => {
      const id = firstMessageId(d);
      return id === null ? null : messageKey(id);
    },
    fields: ['topic'],
  },
};
