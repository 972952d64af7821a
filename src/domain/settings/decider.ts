import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { UserEvent } from '../users/events.js';
import { validateFullName } from '../users/decider.js';
import { SETTING_SPECS } from './catalog.js';
import { AVAILABLE_NOTIFICATION_SOUNDS, SETTING_NAMES, type SettingName } from './defaults.js';
import type { RealmUserSettingsDefaultsChanged } from './events.js';
import { isLanguageCode } from './languages.js';

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;
export const MIN_PASSWORD_LENGTH = 6;

export const isSettingName = (name: string): name is SettingName => Object.hasOwn(SETTING_SPECS, name);

/** Checks one setting value by its type, allowed values and bounds; throws the real server's message. */
export function validateSettingValue(name: SettingName, value: unknown): void {
  const spec = SETTING_SPECS[name];
  switch (spec.type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw errors.invalidArgument(name, 'is not a boolean');
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw errors.invalidArgument(name, 'is not an integer');
      if (spec.enum && !spec.enum.includes(value)) throw errors.badRequest(`Invalid ${name}`);
      if ((spec.minimum !== undefined && value < spec.minimum) || (spec.maximum !== undefined && value > spec.maximum)) {
        throw errors.badRequest(`Invalid ${name}`);
      }
      if (name === 'email_notifications_batching_period_seconds' && (value <= 0 || value > MAX_BATCHING_PERIOD_SECONDS)) {
        throw errors.badRequest(`Invalid email batching period: ${value} seconds`);
      }
      return;
    case 'string':
      if (typeof value !== 'string') throw errors.invalidArgument(name, 'is not a string');
      if (spec.enum && !spec.enum.includes(value)) throw errors.badRequest(`Invalid ${name}`);
      if (name === 'default_language' && !isLanguageCode(value)) throw errors.badRequest('Invalid default_language');
      if (name === 'notification_sound' && !AVAILABLE_NOTIFICATION_SOUNDS.includes(value) && value !== 'none') {
        throw errors.badRequest(`Invalid notification sound '${value}'`);
      }
      return;
    default:
      assertNever(spec);
  }
}

/** Validates every requested value before anything changes: one bad value rejects the whole request. */
export function validateSettingChanges(requested: Record<string, unknown>): Partial<Record<SettingName, unknown>> {
  const out: Partial<Record<SettingName, unknown>> = {};
  for (const name of SETTING_NAMES) {
    if (!Object.hasOwn(requested, name) || requested[name] === undefined) continue;
    validateSettingValue(name, requested[name]);
    out[name] = requested[name];
  }
  return out;
}

/**
 * An IANA zone name, as the real server's zone list has it: the runtime's time zone data must know
 * it, and a differently-cased spelling of a canonical name (`europe/berlin`) does not count. An
 * empty string means "not set".
 */
export function isValidTimezone(name: string): boolean {
  if (name === '') return true;
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  return resolved === name || resolved.toLowerCase() !== name.toLowerCase();
}

export function validateTimezone(name: string): string {
  if (!isValidTimezone(name)) throw errors.badRequest('timezone is not a recognized time zone');
  return name;
}

export function validateNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw errors.badRequest('New password is too weak!');
}

/** Only the changed keys, in the catalog's order (events list properties in a stable order). */
export function changedSettings(requested: Partial<Record<string, unknown>>, current: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    if (!Object.hasOwn(requested, name) || requested[name] === undefined) continue;
    if (current[name] !== requested[name]) changes[name] = requested[name];
  }
  return changes;
}

export interface SettingsState {
  user_id: number;
  is_bot: boolean;
  full_name: string;
  timezone: string;
  settings: Record<string, unknown>;
}

export type SettingsCommand = {
  type: 'ChangeOwnSettings';
  /** Personal settings requested (already validated or not: they are checked again here). */
  settings: Record<string, unknown>;
  full_name?: string;
  timezone?: string;
  /** Set only once the old password was verified by the service; the hash of the new one. */
  new_password_hash?: string;
};

/** Pure: one PATCH /settings → the user-stream events, all or nothing. */
export function decideSettings(command: SettingsCommand, state: SettingsState): UserEvent[] {
  switch (command.type) {
    case 'ChangeOwnSettings': {
      if (state.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      const requested = validateSettingChanges(command.settings);
      const events: UserEvent[] = [];
      const user_id = state.user_id;
      // In the real server's order: the password, the name, the settings, the time zone last.
      if (command.new_password_hash !== undefined) {
        events.push({ type: 'UserPasswordChanged', data: { user_id, password_hash: command.new_password_hash } });
      }
      if (command.full_name !== undefined) {
        const full_name = validateFullName(command.full_name);
        if (full_name !== state.full_name) events.push({ type: 'UserRenamed', data: { user_id, full_name } });
      }
      const changes = changedSettings(requested, state.settings);
      if (Object.keys(changes).length > 0) events.push({ type: 'UserSettingsChanged', data: { user_id, changes } });
      if (command.timezone !== undefined) {
        const timezone = validateTimezone(command.timezone);
        if (timezone !== state.timezone) events.push({ type: 'UserTimezoneChanged', data: { user_id, timezone } });
      }
      return events;
    }
    default:
      return assertNever(command.type);
  }
}

export interface RealmDefaultsState {
  realm_id: number;
  defaults: Record<string, unknown>;
}

/** Pure: PATCH /realm/user_settings_defaults → at most one event with the changed keys. */
export function decideRealmDefaults(
  command: { actor_is_admin: boolean; settings: Record<string, unknown> },
  state: RealmDefaultsState,
): RealmUserSettingsDefaultsChanged[] {
  if (!command.actor_is_admin) throw errors.mustBeAdmin();
  const requested = validateSettingChanges(command.settings);
  const changes = changedSettings(requested, state.defaults);
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'RealmUserSettingsDefaultsChanged', data: { realm_id: state.realm_id, changes } }];
}
