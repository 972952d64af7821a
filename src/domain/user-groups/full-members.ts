import { Role } from '../roles.js';
import type { UserGroupMembersAdded, UserGroupMembersRemoved } from './events.js';

/**
 * role:fullmembers is the one system group whose direct members are not given by role alone: an
 * account with the member role belongs to it once it is at least waiting_period_threshold whole
 * days old (the real server's update_users_in_full_members_system_group). Owners, administrators
 * and moderators are in it through its subgroup chain, guests never.
 */
export const FULL_MEMBERS_GROUP = 'role:fullmembers';

const DAY_MS = 86_400_000;

/** The organization's waiting_period_threshold in days (0 when unset, the default). */
export function waitingPeriodDays(properties: Readonly<Record<string, unknown>>): number {
  const value = Number(properties.waiting_period_threshold ?? 0);
  return Number.isFinite(value) ? value : 0;
}

/** Fewer whole days since joining than the waiting period (the real server counts timedelta.days). */
export function withinWaitingPeriod(dateJoined: string, waitingDays: number, now: Date): boolean {
  const joined = Date.parse(dateJoined);
  if (Number.isNaN(joined)) return false;
  return Math.floor((now.getTime() - joined) / DAY_MS) < waitingDays;
}

export interface FullMemberCandidate {
  user_id: number;
  role: number;
  is_active: boolean;
  date_joined: string;
}

/** Deactivated accounts leave their system groups here (as they leave their role's group). */
export function belongsInFullMembers(user: FullMemberCandidate, waitingDays: number, now: Date): boolean {
  return user.is_active && user.role === Role.MEMBER && !withinWaitingPeriod(user.date_joined, waitingDays, now);
}

/**
 * The membership events that bring the group in line for `users` (as they stand after the command
 * at hand); users not listed keep their membership. As the real server: those leaving first.
 */
export function fullMembersEvents(
  realmId: number,
  groupId: number,
  users: readonly FullMemberCandidate[],
  current: ReadonlySet<number>,
  waitingDays: number,
  now: Date,
): Array<UserGroupMembersRemoved | UserGroupMembersAdded> {
  const add: number[] = [];
  const remove: number[] = [];
  for (const user of users) {
    const belongs = belongsInFullMembers(user, waitingDays, now);
    if (belongs && !current.has(user.user_id)) add.push(user.user_id);
    else if (!belongs && current.has(user.user_id)) remove.push(user.user_id);
  }
  const byId = (a: number, b: number) => a - b;
  const events: Array<UserGroupMembersRemoved | UserGroupMembersAdded> = [];
  if (remove.length > 0) events.push({ type: 'UserGroupMembersRemoved', data: { realm_id: realmId, group_id: groupId, user_ids: [...new Set(remove)].sort(byId) } });
  if (add.length > 0) events.push({ type: 'UserGroupMembersAdded', data: { realm_id: realmId, group_id: groupId, user_ids: [...new Set(add)].sort(byId) } });
  return events;
}
