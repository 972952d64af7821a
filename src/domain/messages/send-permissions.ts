import { ApiError, errors } from '../errors.js';
import { Role, isAdminRole } from '../roles.js';
import { withinWaitingPeriod } from '../user-groups/full-members.js';

/**
 * Who may send what, by the real server's rules for POST /messages. Pure: the caller supplies the
 * sender (and a bot's owner) as they stand, with `provisional` computed from the organization's
 * waiting period.
 */

export interface SendingUser {
  user_id: number;
  role: number;
  is_bot: boolean;
  /** The server's own bots (Notification Bot, Welcome Bot) post anywhere. */
  is_system_bot: boolean;
  /** A new member: joined fewer days ago than the waiting period, and not a moderator. */
  provisional: boolean;
}

export interface PostTarget {
  name: string;
  invite_only: boolean;
  is_web_public: boolean;
  /** 1 everyone, 2 administrators, 3 full members, 4 moderators */
  stream_post_policy: number;
}

/**
 * Days since joining below the waiting period make a new member (moderators never are): the real
 * server's is_provisional_member, by the same age rule as role:fullmembers (user-groups/full-members.ts).
 */
export function isProvisional(role: number, dateJoined: string, waitingDays: number, now: Date): boolean {
  return role !== Role.MODERATOR && withinWaitingPeriod(dateJoined, waitingDays, now);
}

/** The channel's posting policy for one user; throws its refusal. */
function checkPostPolicy(user: SendingUser, stream: PostTarget): void {
  if (isAdminRole(user.role) || user.is_system_bot) return;
  const policy = stream.stream_post_policy;
  if (policy === 2) throw errors.badRequest('Only organization administrators can send to this channel.');
  if (policy === 4 && user.role !== Role.MODERATOR) throw errors.badRequest('Only organization administrators and moderators can send to this channel.');
  if (policy !== 1 && user.role === Role.GUEST) throw errors.badRequest('Guests cannot send to this channel.');
  if (policy === 3 && user.provisional) throw errors.badRequest('New members cannot send to this channel.');
}

/**
 * Sending to a channel: its posting policy first (a bot passes when its owner would), then access:
 * anyone to a web-public channel, any member to a public one, else subscribers, and a bot whose
 * owner is subscribed.
 */
export function checkChannelSend(
  sender: SendingUser,
  owner: SendingUser | null,
  stream: PostTarget,
  subscribed: { sender: boolean; owner: boolean },
): void {
  try {
    checkPostPolicy(sender, stream);
  } catch (error) {
    if (!(sender.is_bot && owner)) throw error;
    checkPostPolicy(owner, stream);
  }
  if (sender.is_system_bot || stream.is_web_public) return;
  if (!stream.invite_only && sender.role !== Role.GUEST) return;
  if (subscribed.sender) return;
  if (sender.is_bot && owner && subscribed.owner) return;
  throw errors.badRequest(`Not authorized to send to channel '${stream.name}'`);
}

/** Above this many subscribers (or topic participants), wildcard mentions follow the policy. */
export const WILDCARD_MENTION_THRESHOLD = 15;

/** wildcard_mention_policy: 1 everyone, 2 members, 3 full members, 5 administrators, 6 nobody, 7 moderators. */
export function wildcardPolicyAllows(user: SendingUser, policy: number): boolean {
  switch (policy) {
    case 1: return true;
    case 2: return user.role !== Role.GUEST;
    case 3: return isAdminRole(user.role) || (!user.provisional && user.role !== Role.GUEST);
    case 5: return isAdminRole(user.role);
    case 7: return isAdminRole(user.role) || user.role === Role.MODERATOR;
    default: return false;
  }
}

export function checkWildcardMentions(
  sender: SendingUser,
  policy: number,
  mention: { stream: boolean; topic: boolean },
  counts: { subscribers: number; topicParticipants: number },
): void {
  if (mention.stream && counts.subscribers > WILDCARD_MENTION_THRESHOLD && !wildcardPolicyAllows(sender, policy)) {
    throw new ApiError('STREAM_WILDCARD_MENTION_NOT_ALLOWED', 400, 'You do not have permission to use channel wildcard mentions in this channel.');
  }
  if (mention.topic && counts.topicParticipants > WILDCARD_MENTION_THRESHOLD && !wildcardPolicyAllows(sender, policy)) {
    throw new ApiError('TOPIC_WILDCARD_MENTION_NOT_ALLOWED', 400, 'You do not have permission to use topic wildcard mentions in this topic.');
  }
}

export interface DmRecipient {
  user_id: number;
  is_bot: boolean;
}

/**
 * private_message_policy 2 (disabled) leaves only what keeps bots working: a bot sending, or a
 * message to a single bot or to oneself.
 */
export function checkDirectMessagePolicy(sender: SendingUser, recipients: DmRecipient[], policy: number): void {
  if (policy !== 2 || sender.is_bot) return;
  if (recipients.length === 1 && (recipients[0]!.is_bot || recipients[0]!.user_id === sender.user_id)) return;
  throw errors.badRequest('Direct messages are disabled in this organization.');
}
