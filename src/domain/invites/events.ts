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
  /**
   * false: another invitation of the same request tells the clients (the real server sends one
   * invites_changed per request). Absent in older events: each one tells them.
   */
  announces?: boolean;
}>;

/** The invitee followed the link and the account `user_id` was created. */
export type InvitationAccepted = Event<'InvitationAccepted', { invite_id: number; realm_id: number; user_id: number }>;

/**
 * Why an invitation was withdrawn when nobody asked for it: its inviter's account was deactivated
 * (the real server's revoke_invites_generated_by_user). Such a revocation tells only the
 * organization's administrators, once for all of them (`announces` false on all but one).
 */
export type RevokedWithInviter = {
  inviter_deactivated?: true;
  announces?: boolean;
};

/** An email invitation withdrawn (DELETE /invites/{id}, or with its inviter): its link stops working. */
export type InvitationRevoked = Event<'InvitationRevoked', { invite_id: number; realm_id: number; invited_by_user_id: number } & RevokedWithInviter>;

/**
 * An email invitation mailed again (POST /invites/{id}/resend). Only a hash of the first key was
 * kept, so the new mail carries a new key: the older link stops working. The expiry date stays.
 */
export type InvitationResent = Event<'InvitationResent', { invite_id: number; realm_id: number; invited_by_user_id: number; invited: number; key_hash: string }>;

/**
 * A reusable invitation link (POST /invites/multiuse). The key itself is kept, as the real server
 * does, because GET /invites shows the link to those who may manage it.
 */
export type MultiuseInviteCreated = Event<'MultiuseInviteCreated', {
  invite_id: number;
  realm_id: number;
  invited_by_user_id: number;
  invited_as: number;
  stream_ids: number[];
  invited: number;
  expiry_date: number | null;
  key: string;
}>;

/** A reusable link withdrawn (DELETE /invites/multiuse/{id}, or with its inviter). */
export type MultiuseInviteRevoked = Event<'MultiuseInviteRevoked', { invite_id: number; realm_id: number; invited_by_user_id: number } & RevokedWithInviter>;

/** Someone created the account `user_id` through a reusable link (it stays usable). */
export type MultiuseInviteUsed = Event<'MultiuseInviteUsed', { invite_id: number; realm_id: number; invited_by_user_id: number; user_id: number }>;

export type InviteEvent = InvitationSent | InvitationAccepted | InvitationRevoked | InvitationResent | MultiuseInviteCreated | MultiuseInviteRevoked | MultiuseInviteUsed;
