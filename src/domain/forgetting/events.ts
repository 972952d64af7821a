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

/**
 * A person was erased: their identity key (`key_ids`) was destroyed, so every name, address,
 * profile value and status text sealed under it reads as shredded everywhere in the log. The
 * account stays as the real server's deleted user (do_delete_user): `full_name` and `email` are
 * that placeholder (never the person's own), and it is deactivated. `messages`: whether their
 * messages were shredded too (each batch is its own MessagesShredded) or kept.
 */
export type UserErased = Event<'UserErased', {
  realm_id: number;
  user_id: number;
  key_ids: string[];
  full_name: string;
  email: string;
  messages: 'shredded' | 'kept';
  /** the Gravatar of the placeholder address: the version after the person's last */
  avatar_version: number;
  /** uploads whose keys and bytes went with the person */
  upload_key_ids: string[];
  reason: string | null;
}>;

export type ForgettingEvent = MessagesShredded | LegalHoldChanged | UserErased;
