import { ApiError, errors } from '../errors.js';
import { Role, isAdminRole, isModeratorOrAbove } from '../roles.js';

/** The real server's default validity of an invitation: INVITATION_LINK_VALIDITY_MINUTES, ten days. */
export const DEFAULT_INVITE_EXPIRES_IN_MINUTES = 10 * 24 * 60;

const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]+$/;

export interface Inviter {
  role: number;
  is_full_member: boolean;
}

/** invite_to_realm_policy: 1 members, 2 administrators, 3 full members, 4 moderators, 6 nobody. Guests never. */
export function mayInvite(policy: number, inviter: Inviter): boolean {
  if (inviter.role === Role.GUEST) return false;
  switch (policy) {
    case 1: return true;
    case 2: return isAdminRole(inviter.role);
    case 3: return isModeratorOrAbove(inviter.role) || inviter.is_full_member;
    case 4: return isModeratorOrAbove(inviter.role);
    default: return false;
  }
}

/**
 * A user invites only to roles with the same or stricter restrictions than their own: owners only
 * by owners, administrators and moderators only by administrators (the real server's
 * check_role_based_permissions; a moderator may not invite a moderator).
 */
export function checkInviteAs(inviteAs: number, inviter: Inviter): void {
  if (inviteAs === Role.OWNER && inviter.role !== Role.OWNER) throw errors.mustBeOwner();
  const needsAdmin = inviteAs === Role.OWNER || inviteAs === Role.ADMINISTRATOR || inviteAs === Role.MODERATOR;
  if (needsAdmin && !isAdminRole(inviter.role)) throw errors.mustBeAdmin();
}

/**
 * The addresses of invitee_emails: separated by commas or newlines, "Name <address>" taken as the
 * address, trimmed, each once (as typed: the real server keeps them in a set of strings).
 */
export function parseInviteeEmails(raw: string): string[] {
  const out = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    const email = (named ? named[1]! : part).trim();
    if (email !== '') out.add(email);
  }
  return [...out];
}

/** INVITES_MIN_USER_AGE_DAYS of the real server. */
export const INVITES_MIN_USER_AGE_DAYS = 3;

/**
 * In an organization anyone may join (invite_required off), an account younger than
 * INVITES_MIN_USER_AGE_DAYS may not invite, unless it is an administrator's: joining to send spam
 * invitations is stopped.
 */
export function checkOldEnoughToInvite(inviteRequired: boolean, inviter: { role: number }, joinedSeconds: number, now: number): void {
  if (inviteRequired || isAdminRole(inviter.role)) return;
  if (joinedSeconds > now - INVITES_MIN_USER_AGE_DAYS * 24 * 3600) {
    throw invitationFailed('Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.', [], false);
  }
}

export const isValidAddress = (email: string) => ADDRESS.test(email) && email.length <= 254;

export type InviteSkip = [email: string, reason: string, deactivated: boolean];

export function invitationFailed(msg: string, skipped: InviteSkip[], sent: boolean): ApiError {
  return new ApiError('INVITATION_FAILED', 400, msg, { errors: skipped, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: false });
}

/**
 * Pure, the real server's order: the addresses already in the organization are set aside; if any
 * address does not validate nothing is sent, and the error lists those addresses and then the ones
 * already in the organization; otherwise the others are invited and those are reported after.
 */
export function checkInvitees(
  emails: readonly string[],
  existing: ReadonlyMap<string, { is_active: boolean }>,
  /** Why the organization does not take an address (its email domain restriction); null: it does. */
  refusal: (email: string) => string | null = () => null,
): { invite: string[]; skipped: InviteSkip[] } {
  const invalid: InviteSkip[] = [];
  const skipped: InviteSkip[] = [];
  const invite: string[] = [];
  for (const email of emails) {
    const problem = isValidAddress(email) ? refusal(email) : 'Invalid address.';
    if (problem !== null) {
      invalid.push([email, problem, false]);
      continue;
    }
    const user = existing.get(email.toLowerCase());
    if (!user) invite.push(email);
    else skipped.push(user.is_active ? [email, 'Already has an account.', false] : [email, 'Account has been deactivated.', true]);
  }
  if (invalid.length > 0) throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...invalid, ...skipped], false);
  if (skipped.length > 0 && invite.length === 0) throw invitationFailed("We weren't able to invite anyone.", skipped, false);
  return { invite, skipped };
}
