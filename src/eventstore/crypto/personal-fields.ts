/**
 * Which fields of which event types hold personal data, and under which data key each event's
 * values are sealed. A message's content, rendered content, earlier versions and topic go under the
 * message's own key, so shredding one message destroys exactly those values.
 */
export interface SealingRule {
  /** The key's id for this event's data; null: nothing to seal in this event. */
  keyOf(data: Record<string, unknown>): KeyScope | null;
  readonly fields: readonly string[];
  /** Also seal object and array values of these fields (not only strings). */
  readonly structured?: boolean;
}

export interface KeyScope {
  readonly keyId: string;
  readonly scope: 'message' | 'user' | 'upload' | 'bot_storage';
  readonly subject: string;
}

export const messageKeyId = (messageId: number) => `message:${messageId}`;
export const messageKey = (messageId: number): KeyScope => ({ keyId: messageKeyId(messageId), scope: 'message', subject: String(messageId) });

export const userKeyId = (userId: number) => `user:${userId}`;
export const userKey = (userId: number): KeyScope => ({ keyId: userKeyId(userId), scope: 'user', subject: String(userId) });

/** A person's identity fields go under their own key: erasing them destroys it (src/services/erasure.ts). */
const byUser = (fields: readonly string[]): SealingRule => ({
  keyOf: (d) => (typeof d.user_id === 'number' ? userKey(d.user_id) : null),
  fields,
});

const firstMessageId = (data: Record<string, unknown>): number | null => {
  const ids = data.message_ids;
  return Array.isArray(ids) && typeof ids[0] === 'number' ? ids[0] : null;
};

/**
 * A bot's storage is sealed under a key per bot and generation: forgetting it (with the bot)
 * destroys that generation's key, and whatever the bot stores after a reactivation goes under the next.
 */
export const botStorageKeyId = (userId: number, generation: number) => `bot-storage:${userId}:${generation}`;
const botStorageKey = (d: Record<string, unknown>): KeyScope | null =>
  typeof d.user_id === 'number' && typeof d.key_generation === 'number'
    ? { keyId: botStorageKeyId(d.user_id, d.key_generation), scope: 'bot_storage', subject: String(d.user_id) }
    : null;

export const SEALING_RULES: Readonly<Record<string, SealingRule>> = {
  // Keys and values a bot stores (events before sealing have no key_generation and stay as they are).
  BotStorageSet: { keyOf: botStorageKey, fields: ['storage'], structured: true },
  BotStorageRemoved: { keyOf: botStorageKey, fields: ['keys'], structured: true },
  MessageSent: {
    keyOf: (d) => (typeof d.message_id === 'number' ? messageKey(d.message_id) : null),
    fields: ['content', 'rendered_content', 'topic', 'widget_content'],
  },
  // A submessage (a vote, an option, a task) is forgotten with its message.
  SubmessageAdded: {
    keyOf: (d) => (typeof d.message_id === 'number' ? messageKey(d.message_id) : null),
    fields: ['content'],
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
  // A person's identity: name, addresses, profile field values, status text (UserAvatarChanged
  // holds only 'G'/'U' and a version: the uploaded image's bytes are the avatar's storage).
  UserCreated: byUser(['email', 'delivery_email', 'full_name']),
  UserRenamed: byUser(['full_name']),
  UserEmailChanged: byUser(['email', 'delivery_email']),
  UserProfileDataChanged: byUser(['value', 'rendered_value']),
  UserStatusChanged: byUser(['status_text']),
};
