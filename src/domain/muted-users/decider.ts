import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { MutedUserEntry, MutedUsersEvent } from './events.js';

export type MutedUsersCommand =
  | { type: 'MuteUser'; user_id: number; muted_user_id: number; date_muted: number }
  | { type: 'UnmuteUser'; user_id: number; muted_user_id: number };

/** Whom the user has muted (by id, with the time), folded from their muted-users stream. */
export interface MutedUsersState {
  muted: readonly MutedUserEntry[];
}

export const noMutedUsers: MutedUsersState = { muted: [] };

export function evolveMutedUsers(_state: MutedUsersState, event: MutedUsersEvent): MutedUsersState {
  return { muted: event.data.muted_users.map((m) => ({ ...m })) };
}

/** Pure; the caller has already checked that the other user exists and is accessible. */
export function decideMutedUsers(command: MutedUsersCommand, state: MutedUsersState): MutedUsersEvent[] {
  const isMuted = state.muted.some((m) => m.id === command.muted_user_id);
  switch (command.type) {
    case 'MuteUser': {
      if (command.muted_user_id === command.user_id) throw errors.badRequest('Cannot mute self');
      if (isMuted) throw errors.badRequest('User already muted');
      const muted_users = [...state.muted, { id: command.muted_user_id, timestamp: command.date_muted }].sort((a, b) => a.id - b.id);
      return [{ type: 'UserMuted', data: { user_id: command.user_id, muted_user_id: command.muted_user_id, date_muted: command.date_muted, muted_users } }];
    }
    case 'UnmuteUser': {
      if (!isMuted) throw errors.badRequest('User is not muted');
      const muted_users = state.muted.filter((m) => m.id !== command.muted_user_id).map((m) => ({ ...m }));
      return [{ type: 'UserUnmuted', data: { user_id: command.user_id, muted_user_id: command.muted_user_id, muted_users } }];
    }
    default:
      return assertNever(command);
  }
}
