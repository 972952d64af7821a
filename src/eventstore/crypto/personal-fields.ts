import { createHash } from 'node:crypto';

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
  /**
   * The event starts its subject (a new message, a new person), whose id was just drawn from a
   * sequence: its key cannot exist yet, so it is minted and stored with the append itself. Should
   * one exist after all (a command retried with the same id), the append fails on the key's primary
   * key and is retried with the stored key (EventStore).
   */
  readonly startsSubject?: boolean;
}

export interface KeyScope {
  readonly keyId: string;
  readonly scope: 'message' | 'user' | 'upload' | 'bot_storage' | 'invite' | 'scheduled_message';
  readonly subject: string;
}

export const messageKeyId = (messageId: number) => `message:${messageId}`;
export const messageKey = (messageId: number): KeyScope => ({ keyId: messageKeyId(messageId), scope: 'message', subject: String(messageId) });

/**
 * An upload's key is named after a digest of its path: the path ends in the file's name (the real
 * server's URL shape), and a key id is stored in the clear (in every envelope's `k`, in UserErased).
 * Files stored before this change use `upload:<path_id>` (legacyUploadKeyId).
 */
export const uploadKeyId = (pathId: string) => `upload:${createHash('sha256').update(pathId, 'utf8').digest('base64url').slice(0, 32)}`;
export const legacyUploadKeyId = (pathId: string) => `upload:${pathId}`;
export const uploadKey = (pathId: string): KeyScope => {
  const keyId = uploadKeyId(pathId);
  return { keyId, scope: 'upload', subject: keyId.slice('upload:'.length) };
};
const byUpload = (fields: readonly string[]): SealingRule => ({
  keyOf: (d) => (typeof d.path_id === 'string' ? uploadKey(d.path_id) : null),
  fields,
});

export const userKeyId = (userId: number) => `user:${userId}`;
export const userKey = (userId: number): KeyScope => ({ keyId: userKeyId(userId), scope: 'user', subject: String(userId) });

/**
 * An email invitation's address belongs to someone who has no account (and no user key) yet: it
 * goes under a key of the invitation's own, destroyed once the invitation is accepted (the address
 * then lives in the account's UserCreated, under the user key) or revoked (src/services/invites.ts).
 */
export const inviteKeyId = (inviteId: number) => `invite:${inviteId}`;

/**
 * A scheduled message's text is under a key of its own, destroyed once it is delivered (the text
 * then lives in the message, under the message's key, and is shredded with it) or deleted.
 */
export const scheduledMessageKeyId = (id: number) => `scheduled-message:${id}`;
const scheduledMessageKey = (d: Record<string, unknown>): KeyScope | null => {
  const message = d.scheduled_message as { id?: unknown; sender_id?: unknown } | undefined;
  return typeof message?.id === 'number' && typeof message.sender_id === 'number'
    ? { keyId: scheduledMessageKeyId(message.id), scope: 'scheduled_message', subject: String(message.sender_id) }
    : null;
};
const SCHEDULED_FIELDS = ['scheduled_message.content', 'scheduled_message.rendered_content', 'scheduled_message.topic'];

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
    startsSubject: true,
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
  // A topic preference a send or a move set names its topic under that message's key.
  UserTopicPolicySet: {
    keyOf: (d) => (typeof d.message_id === 'number' ? messageKey(d.message_id) : null),
    fields: ['topic'],
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
  UserCreated: { ...byUser(['email', 'delivery_email', 'full_name']), startsSubject: true },
  UserRenamed: byUser(['full_name']),
  UserEmailChanged: byUser(['email', 'delivery_email']),
  UserProfileDataChanged: byUser(['value', 'rendered_value']),
  UserStatusChanged: byUser(['status_text']),
  // Both addresses of an email change request (the new one is confirmed or not: either way theirs).
  EmailChangeRequested: byUser(['old_email', 'new_email']),
  // Drafts are the person's own unsent writing: forgotten with them (a deleted draft stays in the
  // log until then; docs/FORGETTING.md).
  DraftsCreated: byUser(['drafts.*.content', 'drafts.*.topic']),
  DraftUpdated: byUser(['draft.content', 'draft.topic']),
  ScheduledMessageCreated: { keyOf: scheduledMessageKey, fields: SCHEDULED_FIELDS },
  ScheduledMessageEdited: { keyOf: scheduledMessageKey, fields: SCHEDULED_FIELDS },
  ScheduledMessageFailed: { keyOf: scheduledMessageKey, fields: SCHEDULED_FIELDS },
  // An upload's name and path (which ends in the name) go under the file's own key, destroyed with
  // the file: lookups by path use the read table, which forgets the row with the file.
  AttachmentUploaded: byUpload(['name', 'path_id']),
  AttachmentDeleted: byUpload(['path_id']),
  InvitationSent: {
    keyOf: (d) => (typeof d.invite_id === 'number' ? { keyId: inviteKeyId(d.invite_id), scope: 'invite', subject: String(d.invite_id) } : null),
    fields: ['email'],
  },
};
