import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { ALL_ROLES, Role, isAdminRole } from '../roles.js';
import type { UserEvent } from './events.js';

export interface UserState {
  user_id: number;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  bot_owner_id: number | null;
  full_name: string;
  is_billing_admin: boolean;
  timezone: string;
  avatar_source: string;
  avatar_version: number;
  default_sending_stream_id: number | null;
  default_events_register_stream_id: number | null;
  default_all_public_streams: boolean;
}

export interface Actor {
  user_id: number;
  role: number;
}

export type UserCommand =
  | { type: 'RenameUser'; actor: Actor; full_name: string }
  | { type: 'ChangeRole'; actor: Actor; role: number; active_owner_count: number }
  | { type: 'SetBillingAdmin'; actor: Actor; is_billing_admin: boolean }
  | { type: 'DeactivateUser'; actor: Actor; active_owner_count: number }
  | { type: 'ReactivateUser'; actor: Actor }
  | { type: 'RegenerateApiKey'; actor: Actor; api_key: string }
  | { type: 'ChangeTimezone'; actor: Actor; timezone: string }
  | { type: 'ChangeBotOwner'; actor: Actor; new_owner: { user_id: number; is_active: boolean; is_bot: boolean } | null }
  /** 'U': an uploaded image (its bytes are stored under the next avatar_version); 'G': back to Gravatar. */
  | { type: 'ChangeAvatar'; actor: Actor; avatar_source: 'G' | 'U' }
  /** The channel ones: a channel the actor may access (checked by the caller), or null. */
  | { type: 'ChangeBotDefault'; actor: Actor; property: BotDefaultProperty; value: number | boolean | null };

export type BotDefaultProperty = 'default_sending_stream' | 'default_events_register_stream' | 'default_all_public_streams';

export const MAX_NAME_LENGTH = 100;

export function validateFullName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw errors.badRequest('Name too short!');
  if (trimmed.length > MAX_NAME_LENGTH) throw errors.badRequest('Name too long!');
  if (/[\u0000-\u001f*`\\>"@]/.test(trimmed)) throw errors.badRequest('Invalid characters in name!');
  return trimmed;
}

const isSelf = (actor: Actor, state: UserState) => actor.user_id === state.user_id;
const mayAdminister = (actor: Actor, state: UserState) =>
  isAdminRole(actor.role) || (state.is_bot && state.bot_owner_id === actor.user_id);

/** Pure: a command and the target user's state give the events to record, or a catalog error. */
export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  const user_id = state.user_id;
  switch (command.type) {
    case 'RenameUser': {
      if (!isSelf(command.actor, state) && !mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      const full_name = validateFullName(command.full_name);
      return full_name === state.full_name ? [] : [{ type: 'UserRenamed', data: { user_id, full_name } }];
    }
    case 'ChangeRole': {
      if (!ALL_ROLES.includes(command.role)) throw errors.badRequest('Invalid role');
      // The real server checks the owner rule first, then the administrator rule.
      const touchesOwner = command.role === Role.OWNER || state.role === Role.OWNER;
      if (touchesOwner && command.actor.role !== Role.OWNER) throw errors.mustBeOwner();
      if (!isAdminRole(command.actor.role)) throw errors.mustBeAdmin();
      if (state.role === Role.OWNER && command.role !== Role.OWNER && command.active_owner_count <= 1) {
        throw errors.badRequest('The owner permission cannot be removed from the only organization owner.');
      }
      if (command.role === state.role) return [];
      return [{ type: 'UserRoleChanged', data: { user_id, role: command.role, old_role: state.role } }];
    }
    case 'SetBillingAdmin': {
      if (!isAdminRole(command.actor.role)) throw errors.mustBeAdmin();
      if (command.is_billing_admin === state.is_billing_admin) return [];
      return [{ type: 'UserBillingAdminChanged', data: { user_id, is_billing_admin: command.is_billing_admin } }];
    }
    case 'DeactivateUser': {
      if (!mayAdminister(command.actor, state)) throw errors.mustBeAdmin();
      if (!state.is_active) throw errors.badRequest('User is already deactivated');
      if (state.role === Role.OWNER && command.actor.role !== Role.OWNER) throw errors.mustBeOwner();
      if (state.role === Role.OWNER && command.active_owner_count <= 1) {
        throw new ApiError('CANNOT_DEACTIVATE_LAST_USER', 400, 'Cannot deactivate the only organization owner', { is_last_owner: true });
      }
      return [{ type: 'UserDeactivated', data: { user_id } }];
    }
    case 'ReactivateUser': {
      if (!mayAdminister(command.actor, state)) throw errors.mustBeAdmin();
      if (state.is_active) throw errors.badRequest('User is already active');
      return [{ type: 'UserReactivated', data: { user_id } }];
    }
    case 'RegenerateApiKey':
      if (!isSelf(command.actor, state) && !mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      return [{ type: 'UserApiKeyRegenerated', data: { user_id, api_key: command.api_key } }];
    case 'ChangeTimezone':
      if (!isSelf(command.actor, state)) throw errors.badRequest('Insufficient permission');
      return command.timezone === state.timezone ? [] : [{ type: 'UserTimezoneChanged', data: { user_id, timezone: command.timezone } }];
    case 'ChangeBotOwner': {
      if (!state.is_bot) throw errors.badRequest('No such bot');
      if (!mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      const owner = command.new_owner;
      if (!owner) throw errors.badRequest('Failed to change owner, no such user');
      if (!owner.is_active) throw errors.badRequest('Failed to change owner, user is deactivated');
      if (owner.is_bot) throw errors.badRequest("Failed to change owner, bots can't own other bots");
      if (owner.user_id === state.bot_owner_id) return [];
      return [{ type: 'UserBotOwnerChanged', data: { user_id, bot_owner_id: owner.user_id, old_bot_owner_id: state.bot_owner_id } }];
    }
    case 'ChangeAvatar':
      if (!isSelf(command.actor, state) && !mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      // Every change, even back to Gravatar, takes a new version so caches see it.
      return [{ type: 'UserAvatarChanged', data: { user_id, avatar_source: command.avatar_source, avatar_version: state.avatar_version + 1 } }];
    case 'ChangeBotDefault': {
      if (!state.is_bot) throw errors.badRequest('No such bot');
      if (!mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      const current = command.property === 'default_all_public_streams' ? state.default_all_public_streams
        : command.property === 'default_sending_stream' ? state.default_sending_stream_id : state.default_events_register_stream_id;
      if (current === command.value) return [];
      return [{ type: 'BotDefaultChanged', data: { user_id, property: command.property, value: command.value } }];
    }
    default:
      return assertNever(command);
  }
}
