import type { Event } from '../event-types.js';

export type UserCreated = Event<'UserCreated', {
  user_id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_bot: boolean;
  /** Only present (true) for the server's own bots, created at bootstrap. */
  is_system_bot?: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  api_key: string;
  password_hash: string | null;
  timezone: string;
  date_joined: string;
  settings: Record<string, unknown>;
  /** An outgoing webhook bot's service, created with it (absent for every other account). */
  service?: BotService;
}>;

/**
 * Where an outgoing webhook bot's webhook posts (base_url: an http(s) URL, or '' when its creator
 * gave none), in which format (interface: 1 Zulip's generic JSON, 2 Slack-compatible form), and
 * the token each request carries so the receiver can tell it comes from this server.
 */
export interface BotService {
  name: string;
  base_url: string;
  interface: number;
  token: string;
}
export type UserRenamed = Event<'UserRenamed', { user_id: number; full_name: string }>;
export type UserRoleChanged = Event<'UserRoleChanged', { user_id: number; role: number; old_role: number }>;
export type UserBillingAdminChanged = Event<'UserBillingAdminChanged', { user_id: number; is_billing_admin: boolean }>;
export type UserDeactivated = Event<'UserDeactivated', { user_id: number }>;
export type UserReactivated = Event<'UserReactivated', { user_id: number }>;
export type UserApiKeyRegenerated = Event<'UserApiKeyRegenerated', { user_id: number; api_key: string }>;
export type UserPasswordChanged = Event<'UserPasswordChanged', { user_id: number; password_hash: string }>;
export type UserTimezoneChanged = Event<'UserTimezoneChanged', { user_id: number; timezone: string }>;
export type UserEmailChanged = Event<'UserEmailChanged', { user_id: number; email: string; delivery_email: string }>;
/** old_bot_owner_id: absent in events recorded before it was added. */
export type UserBotOwnerChanged = Event<'UserBotOwnerChanged', { user_id: number; bot_owner_id: number | null; old_bot_owner_id?: number | null }>;
/** One of a bot's defaults changed; the channel ones hold a channel id or null. */
export type BotDefaultChanged = Event<'BotDefaultChanged', {
  user_id: number;
  property: 'default_sending_stream' | 'default_events_register_stream' | 'default_all_public_streams';
  value: number | boolean | null;
}>;
/** PATCH /bots/{id} with service_payload_url: the bot's service posts elsewhere, or in another format (same token). */
export type BotServiceUpdated = Event<'BotServiceUpdated', { user_id: number; base_url: string; interface: number }>;
export type UserAvatarChanged = Event<'UserAvatarChanged', { user_id: number; avatar_source: string; avatar_version: number }>;
export type UserProfileDataChanged = Event<'UserProfileDataChanged', {
  user_id: number;
  field_id: number;
  value: string | null;
  rendered_value: string | null;
}>;
export type UserSettingsChanged = Event<'UserSettingsChanged', { user_id: number; changes: Record<string, unknown> }>;
export type CustomProfileFieldCreated = Event<'CustomProfileFieldCreated', {
  field_id: number;
  realm_id: number;
  type: number;
  name: string;
  hint: string;
  field_data: string;
  order: number;
  display_in_profile_summary: boolean;
  /** Absent on events before fields could be required: false. */
  required?: boolean;
}>;

export type UserEvent =
  | UserCreated
  | UserRenamed
  | UserRoleChanged
  | UserBillingAdminChanged
  | UserDeactivated
  | UserReactivated
  | UserApiKeyRegenerated
  | UserPasswordChanged
  | UserTimezoneChanged
  | UserEmailChanged
  | UserBotOwnerChanged
  | UserAvatarChanged
  | BotDefaultChanged
  | BotServiceUpdated
  | UserProfileDataChanged
  | UserSettingsChanged
  | CustomProfileFieldCreated;
