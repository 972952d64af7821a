import type { Event } from '../event-types.js';

/**
 * An email invitation. Only the hash of the key is stored: the key itself is in the mailed link.
 * Times in seconds since the epoch; `expiry_date` null: never expires.
 */
export type InvitationSent = Event<'InvitationSent', {
  invite_id: number;
  realm_id: number;
  email: string;
  invited_by_user_id: number;
  invited_as: number;
  stream_ids: number[];
  invited: number;
  expiry_date: number | null;
  key_hash: string;
}>;

/** The invitee followed the link and the account `user_id` was created. */
export type InvitationAccepted = Event<'InvitationAccepted', { invite_id: number; realm_id: number; user_id: number }>;

export type InviteEvent = InvitationSent | InvitationAccepted;
