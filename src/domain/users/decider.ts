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
  /**
   * `own`: DELETE /users/me, refused for the organization's only active account or only owner with
   * CANNOT_DEACTIVATE_LAST_USER; otherwise an administrator's deactivation of someone.
   */
  | { type: 'DeactivateUser'; actor: Actor; active_owner_count: number; own?: { active_user_count: number } }
  /**
   * `active_name_taken`: a bot comes back only while no active account has its name; a bot whose
   * owner is gone comes back owned by whoever reactivates it.
   */
  | { type: 'ReactivateUser'; actor: Actor; active_name_taken?: boolean; bot_owner_active?: boolean }
  | { type: 'RegenerateApiKey'; actor: Actor; api_key: string }
  | { type: 'ChangeTimezone'; actor: Actor; timezone: string }
  | { type: 'ChangeBotOwner'; actor: Actor; new_owner: { user_id: number; is_active: boolean; is_bot: boolean } | null }
  /** 'U': an uploaded image (its bytes are stored under the next avatar_version); 'G': back to Gravatar. */
  | { type: 'ChangeAvatar'; actor: Actor; avatar_source: 'G' | 'U' }
  /** The channel ones: a channel the actor may access (checked by the caller), or null. */
  | { type: 'ChangeBotDefault'; actor: Actor; property: BotDefaultProperty; value: number | boolean | null }
  /** `has_service`: the bot has an outgoing webhook service (read by the caller); the interface is checked by the caller. */
  | { type: 'ChangeBotService'; actor: Actor; base_url: string; interface: number; has_service: boolean };

export type BotDefaultProperty = 'default_sending_stream' | 'default_events_register_stream' | 'default_all_public_streams';

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;

/**
 * The real server's name rules, counted in characters after trimming: 2 to 100 of them, none of
 * Unicode's "other" categories (control, format such as a zero-width space, private use, unassigned)
 * nor * ` \ > " @, and no `|<digits>` at the very end, which mention syntax would read as a user id.
 */
export function validateFullName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length > MAX_NAME_LENGTH) throw errors.badRequest('Name too long!');
  if (length < MIN_NAME_LENGTH) throw errors.badRequest('Name too short!');
  if (/[\p{C}*`\\>"@]/u.test(trimmed)) throw errors.badRequest('Invalid characters in name!');
  if (/\|\d+$/.test(name)) throw errors.badRequest('Invalid format!');
  return trimmed;
}

/** The form require_unique_names compares: compatibility-normalized and case-folded. */
export function nameForUniqueness(name: string): string {
  return name.trim().normalize('NFKC').toUpperCase().toLowerCase();
}

const isSelf = (actor: Actor, state: UserState) => actor.user_id === state.user_id;
/** The organization's only active human owner (a bot with the owner role never counts). */
const isLastOwner = (state: UserState, activeOwners: number) => !state.is_bot && state.role === Role.OWNER && activeOwners <= 1;

function cannotDeactivateLast(isLastOwner: boolean): ApiError {
  const entity = isLastOwner ? 'organization owner' : 'user';
  return new ApiError('CANNOT_DEACTIVATE_LAST_USER', 400, `Cannot deactivate the only ${entity}.`, { is_last_owner: isLastOwner, entity });
}
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
      if (isLastOwner(state, command.active_owner_count) && command.role !== Role.OWNER) {
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
      if (command.own) {
        if (!isSelf(command.actor, state)) throw errors.badRequest('Insufficient permission');
        if (command.own.active_user_count <= 1) throw cannotDeactivateLast(false);
        if (isLastOwner(state, command.active_owner_count)) throw cannotDeactivateLast(true);
        return state.is_active ? [{ type: 'UserDeactivated', data: { user_id } }] : [];
      }
      if (!mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      if (!state.is_active) throw errors.badRequest('User is deactivated');
      if (state.role === Role.OWNER && command.actor.role !== Role.OWNER) throw errors.mustBeOwner();
      if (isLastOwner(state, command.active_owner_count)) throw errors.badRequest('Cannot deactivate the only organization owner');
      return [{ type: 'UserDeactivated', data: { user_id } }];
    }
    case 'ReactivateUser': {
      if (!mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      // Reactivating an active account changes nothing, and succeeds as on the real server.
      if (state.is_active) return [];
      if (state.is_bot && command.active_name_taken) {
        throw errors.badRequest(`There is already an active bot named "${state.full_name}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`);
      }
      const events: UserEvent[] = [{ type: 'UserReactivated', data: { user_id } }];
      if (state.is_bot && state.bot_owner_id !== null && command.bot_owner_active === false && command.actor.user_id !== state.bot_owner_id) {
        events.push({ type: 'UserBotOwnerChanged', data: { user_id, bot_owner_id: command.actor.user_id, old_bot_owner_id: state.bot_owner_id } });
      }
      return events;
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
    case 'ChangeBotService':
      if (!state.is_bot) throw errors.badRequest('No such bot');
      if (!mayAdminister(command.actor, state)) throw errors.badRequest('Insufficient permission');
      // The real server fails on a bot without a service (an unhandled error); this answers 400.
      if (!command.has_service) throw errors.badRequest('This bot has no outgoing webhook service');
      // Recorded, and announced to the bot's administrators, even when nothing changes: as the real server.
      return [{ type: 'BotServiceUpdated', data: { user_id, base_url: command.base_url, interface: command.interface } }];
    default:
      return assertNever(command);
  }
}
