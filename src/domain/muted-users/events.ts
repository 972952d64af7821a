import type { Event } from '../event-types.js';

/** One muted user as the muted_users client event lists them: `timestamp` in seconds since the epoch. */
export interface MutedUserEntry {
  id: number;
  timestamp: number;
}

/** `muted_users`: the user's whole list afterwards, ordered by id (the client event carries it). */
export type UserMuted = Event<'UserMuted', { user_id: number; muted_user_id: number; date_muted: number; muted_users: MutedUserEntry[] }>;
export type UserUnmuted = Event<'UserUnmuted', { user_id: number; muted_user_id: number; muted_users: MutedUserEntry[] }>;

export type MutedUsersEvent = UserMuted | UserUnmuted;
