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

/** A user invites only to roles with the same or stricter restrictions than their own. */
export function checkInviteAs(inviteAs: number, inviter: Inviter): void {
  if (inviteAs === Role.OWNER && inviter.role !== Role.OWNER) throw errors.mustBeOwner();
  if (inviteAs === Role.ADMINISTRATOR && !isAdminRole(inviter.role)) throw errors.mustBeAdmin();
  if (inviteAs === Role.MODERATOR && !isModeratorOrAbove(inviter.role)) throw errors.badRequest('Insufficient permission');
}

/** The addresses of invitee_emails: separated by commas or newlines, trimmed, each once. */
export function parseInviteeEmails(raw: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of raw.split(/[,\n]/)) {
    const email = part.trim();
    if (email === '' || seen.has(email.toLowerCase())) continue;
    seen.add(email.toLowerCase());
    out.push(email);
  }
  return out;
}

export const isValidAddress = (email: string) => ADDRESS.test(email) && email.length <= 254;

export type InviteSkip = [email: string, reason: string, deactivated: boolean];

export function invitationFailed(msg: string, skipped: InviteSkip[], sent: boolean): ApiError {
  return new ApiError('INVITATION_FAILED', 400, msg, { errors: skipped, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: false });
}

/**
 * Pure, the real server's order: an address that does not validate stops everything; addresses
 * already in the organization are skipped, and reported after the others are invited.
 */
export function checkInvitees(
  emails: readonly string[],
  existing: ReadonlyMap<string, { is_active: boolean }>,
  /** Why the organization does not take an address (its email domain restriction); null: it does. */
  refusal: (email: string) => string | null = () => null,
): { invite: string[]; skipped: InviteSkip[] } {
  if (emails.length === 0) throw errors.badRequest('You must specify at least one email address.');
  const invalid: InviteSkip[] = emails.flatMap((e): InviteSkip[] => {
    const problem = isValidAddress(e) ? refusal(e) : 'Invalid address.';
    return problem === null ? [] : [[e, problem, false]];
  });
  if (invalid.length > 0) throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", invalid, false);
  const skipped: InviteSkip[] = [];
  const invite: string[] = [];
  for (const email of emails) {
    const user = existing.get(email.toLowerCase());
    if (!user) invite.push(email);
    else skipped.push(user.is_active ? [email, 'Already has an account.', false] : [email, 'Account has been deactivated.', true]);
  }
  if (invite.length === 0) throw invitationFailed("We weren't able to invite anyone.", skipped, false);
  return { invite, skipped };
}
