import { errors } from '../errors.js';
import { Role } from '../roles.js';
import { isLanguageCode } from '../settings/languages.js';
import { SUPPORTED_PERMISSION_SETTINGS, VIDEO_CHAT_PROVIDERS } from '../realm/server-catalogs.js';
import type { RealmSettingChanged } from './events.js';

/**
 * The organization settings an administrator changes with PATCH /realm, as the real server's
 * update_realm takes them (feature level 247). Each kind says how the parameter arrives and how
 * it is checked; `owner` marks the ones the real server refuses to administrators.
 */
type SettingKind =
  | { kind: 'bool' }
  | { kind: 'text'; maxLength?: number }
  | { kind: 'choice'; values: readonly number[] }
  /** A whole number of days, read as text the way the real server converts it. */
  | { kind: 'count' }
  /** A number of seconds, or "unlimited" (stored as null). */
  | { kind: 'limit' }
  | { kind: 'retention' }
  | { kind: 'language' }
  | { kind: 'jitsi' }
  | { kind: 'channel' }
  | { kind: 'group' }
  | { kind: 'auth' };

export type RealmSettingSpec = SettingKind & { owner?: true };

const VIDEO_CHAT_PROVIDER_IDS = Object.values(VIDEO_CHAT_PROVIDERS).map((p) => p.id);

// Permission levels (api/roles-and-permissions): 1 members, 2 admins, 3 full members,
// 4 moderators, 5 everyone, 6 nobody, 7 owners.
const COMMON = [1, 2, 3, 4] as const;

export const REALM_SETTINGS: Readonly<Record<string, RealmSettingSpec>> = {
  name: { kind: 'text', maxLength: 40 },
  description: { kind: 'text', maxLength: 1000 },
  emails_restricted_to_domains: { kind: 'bool', owner: true },
  disallow_disposable_email_addresses: { kind: 'bool', owner: true },
  invite_required: { kind: 'bool', owner: true },
  invite_to_realm_policy: { kind: 'choice', values: [1, 2, 3, 4, 6], owner: true },
  create_multiuse_invite_group: { kind: 'group', owner: true },
  require_unique_names: { kind: 'bool' },
  name_changes_disabled: { kind: 'bool' },
  email_changes_disabled: { kind: 'bool' },
  avatar_changes_disabled: { kind: 'bool' },
  inline_image_preview: { kind: 'bool' },
  inline_url_embed_preview: { kind: 'bool' },
  add_custom_emoji_policy: { kind: 'choice', values: COMMON },
  delete_own_message_policy: { kind: 'choice', values: [1, 2, 3, 4, 5] },
  message_content_delete_limit_seconds: { kind: 'limit' },
  allow_message_editing: { kind: 'bool' },
  edit_topic_policy: { kind: 'choice', values: [1, 2, 3, 4, 5, 6] },
  mandatory_topics: { kind: 'bool' },
  message_content_edit_limit_seconds: { kind: 'limit' },
  allow_edit_history: { kind: 'bool' },
  default_language: { kind: 'language' },
  waiting_period_threshold: { kind: 'count', owner: true },
  authentication_methods: { kind: 'auth', owner: true },
  new_stream_announcements_stream_id: { kind: 'channel' },
  signup_announcements_stream_id: { kind: 'channel' },
  zulip_update_announcements_stream_id: { kind: 'channel' },
  message_retention_days: { kind: 'retention', owner: true },
  send_welcome_emails: { kind: 'bool' },
  digest_emails_enabled: { kind: 'bool' },
  message_content_allowed_in_email_notifications: { kind: 'bool' },
  bot_creation_policy: { kind: 'choice', values: [1, 2, 3] },
  create_public_stream_policy: { kind: 'choice', values: COMMON },
  create_private_stream_policy: { kind: 'choice', values: COMMON },
  create_web_public_stream_policy: { kind: 'choice', values: [2, 4, 6, 7] },
  invite_to_stream_policy: { kind: 'choice', values: COMMON },
  move_messages_between_streams_policy: { kind: 'choice', values: [1, 2, 3, 4, 6] },
  user_group_edit_policy: { kind: 'choice', values: COMMON },
  private_message_policy: { kind: 'choice', values: [1, 2] },
  wildcard_mention_policy: { kind: 'choice', values: [1, 2, 3, 5, 6, 7] },
  // The providers this server offers (VIDEO_CHAT_PROVIDERS): Zoom (3) and BigBlueButton (4)
  // exist on the real server only when configured, which this server never is.
  video_chat_provider: { kind: 'choice', values: VIDEO_CHAT_PROVIDER_IDS },
  jitsi_server_url: { kind: 'jitsi' },
  giphy_rating: { kind: 'choice', values: [0, 1, 2, 3, 4, 5] },
  default_code_block_language: { kind: 'text' },
  digest_weekday: { kind: 'choice', values: [0, 1, 2, 3, 4, 5, 6] },
  org_type: { kind: 'choice', values: [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000] },
  enable_spectator_access: { kind: 'bool' },
  want_advertise_in_communities_directory: { kind: 'bool' },
  enable_read_receipts: { kind: 'bool' },
  move_messages_within_stream_limit_seconds: { kind: 'limit' },
  move_messages_between_streams_limit_seconds: { kind: 'limit' },
  enable_guest_user_indicator: { kind: 'bool' },
  can_access_all_users_group: { kind: 'group' },
};

/** Settings whose client event is realm/update_dict (the rest are realm/update), as on the real server. */
export const UPDATE_DICT_SETTINGS: ReadonlySet<string> = new Set([
  'allow_message_editing',
  'edit_topic_policy',
  'message_content_edit_limit_seconds',
  'authentication_methods',
  'create_multiuse_invite_group',
  'can_access_all_users_group',
]);

/** The authentication methods this server offers: email and password only. */
export const AUTHENTICATION_METHODS = ['Email'] as const;

const JITSI_URL_MAX_LENGTH = 200;
const MAX_INT = 2_147_483_647;

export interface RealmSettingsState {
  realm_id: number;
  name: string;
  /** Current values, defaults included; group settings as the group's id. */
  properties: Readonly<Record<string, unknown>>;
  /** The realm's system groups by id (group settings may only name these). */
  system_groups: ReadonlyMap<number, string>;
  /** The realm's other (user-made) groups, which exist but may not hold these settings. */
  other_group_ids: ReadonlySet<number>;
  /** Ids of the realm's channels an administrator may name (not archived). */
  channel_ids: ReadonlySet<number>;
}

export interface UpdateRealmSettings {
  type: 'UpdateRealmSettings';
  actor_role: number;
  /** Raw parameter values as the route decoded them. */
  settings: Readonly<Record<string, unknown>>;
}

/** A URL as the real server's capped URL check takes it: web or FTP, with a host name. */
function isCappedUrl(value: string): boolean {
  if (value.length > JITSI_URL_MAX_LENGTH) return false;
  try {
    const url = new URL(value);
    const host = url.hostname;
    // A name with a top-level domain, localhost, or an IP address (as Django's URL validator).
    const hostOk = /\.(?:[a-z\u00a1-\uffff-]{2,63}|xn--[a-z0-9]{1,59})\.?$/i.test(host) || host === 'localhost'
      || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith('[');
    return ['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) && hostOk;
  } catch {
    return false;
  }
}

function timeLimit(name: string, value: unknown): number | null {
  if (value === 'unlimited') return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_INT) {
    throw errors.badRequest(`Bad value for '${name}': ${String(value)}`);
  }
  return value;
}

function retentionDays(value: unknown): number {
  // The organization's only special value ('realm_default' and the like are the channels').
  if (value === 'unlimited') return -1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_INT) {
    throw errors.badRequest(`Bad value for 'message_retention_days': ${String(value)}`);
  }
  return value;
}

function groupSetting(name: string, value: unknown, state: RealmSettingsState): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw errors.invalidArgument(name, 'is not an integer');
  const groupName = state.system_groups.get(value);
  // At this feature level every organization group setting takes a system group only.
  if (state.other_group_ids.has(value)) throw errors.badRequest(`'${name}' must be a system user group.`);
  if (groupName === undefined) throw errors.badRequest('Invalid user group');
  const rules = SUPPORTED_PERMISSION_SETTINGS.realm[name as keyof typeof SUPPORTED_PERMISSION_SETTINGS.realm];
  const refused = (groupName === 'role:internet' && !rules.allow_internet_group)
    || (groupName === 'role:owners' && !rules.allow_owners_group)
    || (groupName === 'role:nobody' && !rules.allow_nobody_group)
    || (groupName === 'role:everyone' && !rules.allow_everyone_group)
    || (rules.allowed_system_groups.length > 0 && !(rules.allowed_system_groups as readonly string[]).includes(groupName));
  if (refused) throw errors.badRequest(`'${name}' setting cannot be set to '${groupName}' group.`);
  return value;
}

/**
 * The parameter layer's checks (the real server's request parsing, in declaration order, before
 * any rule of the organization is looked at): types, lengths, fixed choices.
 */
function checkShape(name: string, spec: RealmSettingSpec, raw: unknown): void {
  switch (spec.kind) {
    case 'bool':
      if (typeof raw !== 'boolean') throw errors.invalidArgument(name, 'is not a boolean');
      return;
    case 'text':
      if (typeof raw !== 'string') throw errors.invalidArgument(name, 'is not a string');
      // Counted in characters (code points), as the real server counts them.
      if (spec.maxLength !== undefined && [...raw].length > spec.maxLength) {
        throw errors.badRequest(`${name} is too long (limit: ${spec.maxLength} characters)`);
      }
      return;
    case 'choice':
      if (typeof raw !== 'number' || !Number.isInteger(raw)) throw errors.invalidArgument(name, 'is not an integer');
      // Two settings take any integer here and name the bad value later.
      if (name !== 'video_chat_provider' && name !== 'giphy_rating' && !spec.values.includes(raw)) throw errors.badRequest(`Invalid ${name}`);
      return;
    case 'count': {
      // Read as a non-negative whole number from its text; anything else is a bad value.
      const text = typeof raw === 'string' ? raw.trim() : String(raw);
      const value = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(value) || value < 0 || value > MAX_INT) throw errors.badRequest(`Bad value for '${name}': ${String(raw)}`);
      return;
    }
    case 'limit': case 'retention':
      if (typeof raw !== 'string' && !(typeof raw === 'number' && Number.isInteger(raw))) throw errors.invalidArgument(name, 'is not a string or an integer');
      return;
    case 'language':
      if (typeof raw !== 'string') throw errors.invalidArgument(name, 'is not a string');
      return;
    case 'jitsi':
      // The special value, or a URL of at most 200 characters; anything else (a number, '') is
      // refused in one message, as the real server's union of the two checks words it.
      if (raw !== 'default' && !(typeof raw === 'string' && isCappedUrl(raw))) throw errors.badRequest('jitsi_server_url is not an allowed_type');
      return;
    case 'channel': case 'group':
      if (typeof raw !== 'number' || !Number.isInteger(raw)) throw errors.invalidArgument(name, 'is not an integer');
      return;
    case 'auth':
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw errors.invalidArgument(name, 'is not a dict');
      return;
  }
}

/**
 * When the real server looks at a setting's value beyond its shape (and at who asks, for the
 * owners' settings): language first, then sign-in methods, the two providers, retention, the other
 * owners' settings, time limits, groups and channels last. An error met earlier wins.
 */
function checkRank(name: string, spec: RealmSettingSpec): number {
  if (spec.kind === 'language') return 0;
  if (spec.kind === 'auth') return 1;
  if (name === 'video_chat_provider') return 2;
  if (name === 'giphy_rating') return 3;
  if (spec.kind === 'retention') return 4;
  if (spec.kind === 'limit') return 6;
  if (spec.kind === 'group') return 7;
  if (spec.kind === 'channel') return 8;
  return 5;
}

/** The stored value a well-shaped parameter asks for; throws the real server's error otherwise. */
function parseSetting(name: string, spec: RealmSettingSpec, raw: unknown, state: RealmSettingsState): unknown {
  switch (spec.kind) {
    case 'bool': case 'text':
      return raw;
    case 'choice':
      if (!spec.values.includes(raw as number)) throw errors.badRequest(`Invalid ${name} ${String(raw)}`);
      return raw;
    case 'count':
      return Number(typeof raw === 'string' ? raw.trim() : raw);
    case 'limit':
      return timeLimit(name, raw);
    case 'retention':
      return retentionDays(raw);
    case 'language':
      if (!isLanguageCode(raw as string)) throw errors.badRequest(`Invalid language '${String(raw)}'`);
      return raw;
    case 'jitsi':
      return raw === 'default' ? null : raw;
    case 'channel':
      if ((raw as number) < 0) return -1;
      if (!state.channel_ids.has(raw as number)) throw errors.invalidChannelId();
      return raw;
    case 'group':
      // The value already held is not looked at again.
      return state.properties[name] === raw ? raw : groupSetting(name, raw, state);
    case 'auth': {
      const entries = Object.entries(raw as Record<string, unknown>);
      for (const [method, enabled] of entries) {
        if (!(AUTHENTICATION_METHODS as readonly string[]).includes(method)) {
          // The list as the real server prints it (a Python list of the sorted names).
          const valid = `[${[...AUTHENTICATION_METHODS].sort().map((m) => `'${m}'`).join(', ')}]`;
          throw errors.badRequest(`Invalid authentication method: ${method}. Valid methods are: ${valid}`);
        }
        if (typeof enabled !== 'boolean') throw errors.invalidArgument(`${name}[${method}]`, 'is not a boolean');
      }
      if (!entries.some(([, enabled]) => enabled === true)) throw errors.badRequest('At least one authentication method must be enabled.');
      // With one method that must stay enabled, nothing is ever stored.
      return undefined;
    }
  }
}

/** The settings the real server records apart from (and before) the others when set to "unlimited"/"default". */
const CLEARED_FIRST = [
  'message_content_delete_limit_seconds',
  'message_content_edit_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
  'jitsi_server_url',
];

/**
 * Where the real server's update_realm records a setting, so one request's events come in its
 * order: time limits and the Jitsi URL being cleared; the plain settings in parameter order; the
 * retention period, then time limits and the Jitsi URL being set; group settings; sign-in
 * methods; announcement channels; the organization type.
 */
function recordRank(name: string, value: unknown): number {
  const spec = REALM_SETTINGS[name]!;
  const cleared = CLEARED_FIRST.indexOf(name);
  if (cleared >= 0 && value === null) return 0;
  if (spec.kind === 'retention' || cleared >= 0) return 2;
  if (spec.kind === 'group') return 3;
  if (spec.kind === 'auth') return 4;
  if (spec.kind === 'channel') return 5;
  if (name === 'org_type') return 6;
  return 1;
}

function compareRecordOrder(a: string, aValue: unknown, b: string, bValue: unknown): number {
  const byRank = recordRank(a, aValue) - recordRank(b, bValue);
  if (byRank !== 0) return byRank;
  // Within a rank: the retention period, then the cleared/set list's own order, else the parameters' order.
  if (CLEARED_FIRST.includes(a) || CLEARED_FIRST.includes(b)) return CLEARED_FIRST.indexOf(a) - CLEARED_FIRST.indexOf(b);
  const order = Object.keys(REALM_SETTINGS);
  return order.indexOf(a) - order.indexOf(b);
}

/**
 * Recorded even when the value stays: the organization type (the real server records every
 * request for it) and a disabled announcement channel asked to be disabled again.
 */
function recordedUnchanged(name: string, spec: RealmSettingSpec, value: unknown): boolean {
  return name === 'org_type' || (spec.kind === 'channel' && value === -1);
}

/**
 * Pure: PATCH /realm. Every value is checked (and every owner-only one refused to an
 * administrator) before anything is recorded; then one event per setting whose value changes.
 * Returns the events and the response's `data` (the real server answers with what changed,
 * "updated" for text values).
 */
export function decideRealmSettings(
  command: UpdateRealmSettings,
  state: RealmSettingsState,
): { events: RealmSettingChanged[]; changed: Record<string, unknown> } {
  if (command.actor_role > Role.ADMINISTRATOR) throw errors.mustBeAdmin();
  const asked = Object.entries(command.settings).filter(([name, raw]) => REALM_SETTINGS[name] && raw !== undefined);
  const order = Object.keys(REALM_SETTINGS);
  asked.sort(([a], [b]) => order.indexOf(a) - order.indexOf(b));
  for (const [name, raw] of asked) checkShape(name, REALM_SETTINGS[name]!, raw);
  const byRank = [...asked].sort(([a], [b]) => checkRank(a, REALM_SETTINGS[a]!) - checkRank(b, REALM_SETTINGS[b]!));
  // Every owners' setting is refused to an administrator before any time limit, group or channel is read.
  const refuseOwnersAt = (name: string) => Math.min(checkRank(name, REALM_SETTINGS[name]!), 5);
  const values = new Map<string, unknown>();
  for (let rank = 0; rank <= 8; rank += 1) {
    for (const [name, raw] of byRank) {
      const spec = REALM_SETTINGS[name]!;
      if (spec.owner && refuseOwnersAt(name) === rank && command.actor_role !== Role.OWNER) throw errors.mustBeOwner();
      if (checkRank(name, spec) === rank) values.set(name, parseSetting(name, spec, raw, state));
    }
  }
  const events: RealmSettingChanged[] = [];
  const changed: Record<string, unknown> = {};
  const recorded = [...asked].sort(([a], [b]) => compareRecordOrder(a, values.get(a), b, values.get(b)));
  for (const [name] of recorded) {
    const value = values.get(name);
    if (value === undefined) continue;
    const current = name === 'name' ? state.name : state.properties[name];
    if (current === value && !recordedUnchanged(name, REALM_SETTINGS[name]!, value)) continue;
    events.push({ type: 'RealmSettingChanged', data: { realm_id: state.realm_id, property: name, value } });
    changed[name] = typeof value === 'string' ? 'updated' : value;
  }
  return { events, changed };
}
