import { ApiError, errors } from '../errors.js';
import { Role, isAdminRole, isModeratorOrAbove } from '../roles.js';
import type { ChannelEvent, StreamCreated, StreamProperties, StreamPropertyChanged } from './events.js';

export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;
export const MAX_TOPIC_LENGTH = 60;

export const StreamPostPolicy = { EVERYONE: 1, ADMINS: 2, FULL_MEMBERS: 3, MODERATORS: 4 } as const;
export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** The acting user as the channel rules see it; `is_full_member` is computed from the realm's waiting period. */
export interface ChannelActor {
  user_id: number;
  role: number;
  is_full_member: boolean;
}

/** The organization settings the channel rules read. */
export interface ChannelRealmSettings {
  create_public_stream_policy: number;
  create_private_stream_policy: number;
  create_web_public_stream_policy: number;
  invite_to_stream_policy: number;
  /** The server setting and the organization's enable_spectator_access together. */
  web_public_streams_enabled: boolean;
}

/**
 * Organization permission levels (/api/roles-and-permissions): 1 members, 2 administrators,
 * 3 full members, 4 moderators, 6 nobody, 7 owners. Guests never pass a policy.
 */
export function hasPolicy(policy: number, actor: ChannelActor): boolean {
  if (actor.role === Role.GUEST) return false;
  switch (policy) {
    case 1: return true;
    case 2: return isAdminRole(actor.role);
    case 3: return isModeratorOrAbove(actor.role) || actor.is_full_member;
    case 4: return isModeratorOrAbove(actor.role);
    case 7: return actor.role === Role.OWNER;
    default: return false;
  }
}

/** Names are stored and compared in Unicode NFC, so two spellings of one name are one channel. */
export const canonicalStreamName = (raw: string) => raw.normalize('NFC');

export function checkStreamName(raw: string): string {
  const name = canonicalStreamName(raw).trim();
  // Lengths and positions count code points, as the real server counts characters.
  const chars = Array.from(name);
  if (chars.length === 0) throw errors.badRequest("Channel name can't be empty.");
  if (chars.length > MAX_STREAM_NAME_LENGTH) throw errors.badRequest(`Channel name too long (limit: ${MAX_STREAM_NAME_LENGTH} characters).`);
  // Control characters, lone surrogates and unassigned code points (Unicode Cc, Cs, Cn).
  const bad = chars.findIndex((c) => /[\p{Cc}\p{Cs}\p{Cn}]/u.test(c));
  if (bad >= 0) throw errors.badRequest(`Invalid character in channel name, at position ${bad + 1}.`);
  return name;
}

/** Strings nested in JSON parameters escape the form-level NUL check; the log and PostgreSQL text refuse NUL. */
export function rejectNul(value: string, name: string): string {
  if (value.includes('\u0000')) throw errors.badRequest(`${name} contains NULL (0x00) characters.`);
  return value;
}

/** Descriptions are one line: the real server turns newlines into spaces. */
export function normalizeDescription(raw: string): string {
  rejectNul(raw, 'description');
  if (raw.length > MAX_STREAM_DESCRIPTION_LENGTH) {
    throw errors.badRequest(`description is too long (limit: ${MAX_STREAM_DESCRIPTION_LENGTH} characters)`);
  }
  return raw.replace(/\r?\n/g, ' ');
}

/** `message_retention_days`: a positive integer, `unlimited` (-1) or `realm_default` (null). */
export function parseRetentionDays(value: string | number): number | null {
  if (value === 'unlimited' || value === 'forever') return -1;
  if (value === 'realm_default') return null;
  const n = typeof value === 'number' ? value : /^-?\d+$/.test(value) ? Number(value) : NaN;
  // The read model stores an integer column: larger values are refused here, not in a projection.
  if (!Number.isInteger(n) || n <= 0 || n > 2147483647) throw errors.badRequest(`Bad value for 'message_retention_days': ${value}`);
  return n;
}

/** A can_remove_subscribers_group candidate, resolved by the service. */
export interface GroupRef {
  id: number;
  name: string;
  is_system_group: boolean;
}

export function checkRemoveSubscribersGroup(group: GroupRef | undefined): number {
  if (!group) throw errors.badRequest('Invalid user group');
  if (!group.is_system_group) throw errors.badRequest("'can_remove_subscribers_group' must be a system user group.");
  if (group.name === 'role:internet' || group.name === 'role:owners' || group.name === 'role:nobody') {
    throw errors.badRequest(`'can_remove_subscribers_group' setting cannot be set to '${group.name}' group.`);
  }
  return group.id;
}

export interface CreateStreamCommand {
  type: 'CreateStream';
  actor: ChannelActor;
  realm: ChannelRealmSettings;
  stream_id: number;
  realm_id: number;
  now: number;
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean | undefined;
  stream_post_policy: number;
  message_retention_days: number | null | undefined;
  can_remove_subscribers_group: number;
  is_default: boolean;
}

/** Pure: creating a channel, under the organization's creation policies. */
export function decideCreateStream(cmd: CreateStreamCommand): StreamCreated {
  const { actor, realm } = cmd;
  // The real server's order: public/private policy, default channel, web-public, retention period.
  if (!hasPolicy(cmd.invite_only ? realm.create_private_stream_policy : realm.create_public_stream_policy, actor)) {
    throw errors.badRequest('Insufficient permission');
  }
  if (cmd.is_default && !isAdminRole(actor.role)) throw errors.badRequest('Insufficient permission');
  if (cmd.is_default && cmd.invite_only) throw errors.badRequest('A default channel cannot be private.');
  if (cmd.is_web_public) {
    if (!realm.web_public_streams_enabled) throw errors.badRequest('Web-public channels are not enabled.');
    if (!hasPolicy(realm.create_web_public_stream_policy, actor)) throw errors.badRequest('Insufficient permission');
    if (cmd.invite_only) throw errors.badRequest('Invalid parameters');
  }
  // `realm_default` (null) is no choice of period, so anyone may pass it.
  if (cmd.message_retention_days !== undefined && cmd.message_retention_days !== null && actor.role !== Role.OWNER) throw errors.mustBeOwner();
  // Public channels always share their history with subscribers; private ones protect it by default.
  const history = cmd.invite_only ? cmd.history_public_to_subscribers ?? false : true;
  return {
    type: 'StreamCreated',
    data: {
      stream_id: cmd.stream_id,
      realm_id: cmd.realm_id,
      name: cmd.name,
      description: cmd.description,
      rendered_description: cmd.rendered_description,
      invite_only: cmd.invite_only,
      is_web_public: cmd.is_web_public,
      history_public_to_subscribers: history,
      stream_post_policy: cmd.stream_post_policy,
      message_retention_days: cmd.message_retention_days ?? null,
      can_remove_subscribers_group: cmd.can_remove_subscribers_group,
      creator_id: actor.user_id,
      date_created: cmd.now,
      is_default: cmd.is_default,
    },
  };
}

/** What PATCH /streams/{stream_id} asks for, already parsed. */
export interface StreamChanges {
  description?: string;
  rendered_description?: string;
  new_name?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  stream_post_policy?: number;
  is_announcement_only?: boolean;
  message_retention_days?: number | null;
  can_remove_subscribers_group?: number;
}

export interface StreamState extends StreamProperties {
  stream_id: number;
  is_default: boolean;
  deactivated: boolean;
}

export interface UpdateStreamCommand {
  type: 'UpdateStream';
  actor: ChannelActor;
  actor_subscribed: boolean;
  realm: ChannelRealmSettings;
  /** Another active channel already has the requested new name (case-insensitively). */
  new_name_taken: boolean;
  changes: StreamChanges;
}

/** Who may manage a channel at all: administrators; others learn nothing about private channels they are not in. */
export function checkCanManageStream(actor: ChannelActor, stream: StreamState, subscribed: boolean): void {
  if (stream.deactivated) throw errors.invalidChannelId();
  if (isAdminRole(actor.role)) return;
  if (stream.invite_only && !subscribed) throw errors.invalidChannelId();
  throw errors.mustBeAdmin();
}

function changed(stream: StreamState, property: StreamPropertyChanged['data']['property'], value: unknown, old: unknown, extra?: Record<string, unknown>): StreamPropertyChanged {
  return { type: 'StreamPropertyChanged', data: { stream_id: stream.stream_id, property, value, old_value: old, ...(extra ? { extra } : {}) } };
}

/** Pure: the rules of PATCH /streams/{stream_id}, in the real server's order. */
export function decideUpdateStream(cmd: UpdateStreamCommand, stream: StreamState): ChannelEvent[] {
  const { actor, changes: c } = cmd;
  checkCanManageStream(actor, stream, cmd.actor_subscribed);

  const isPrivate = c.is_private ?? stream.invite_only;
  const isWebPublic = c.is_web_public ?? stream.is_web_public;
  const history = c.history_public_to_subscribers ?? (c.is_private !== undefined ? !c.is_private : stream.history_public_to_subscribers);
  if (isWebPublic && !history) throw errors.badRequest('Invalid parameters');
  if (isWebPublic && isPrivate) throw errors.badRequest('Invalid parameters');
  if (!isPrivate && !history) throw errors.badRequest('Invalid parameters');
  // A default channel stays public: remove it from the defaults first (or in the same request).
  if (isPrivate && (c.is_default_stream ?? stream.is_default)) throw errors.badRequest('A default channel cannot be private.');
  // Changing a private channel's permissions needs real access: an administrator must be subscribed.
  const touchesPermissions = c.is_private !== undefined || c.is_web_public !== undefined || c.history_public_to_subscribers !== undefined;
  if (touchesPermissions && stream.invite_only && !cmd.actor_subscribed) throw errors.invalidChannelId();
  if (c.is_web_public) {
    if (!cmd.realm.web_public_streams_enabled) throw errors.badRequest('Web-public channels are not enabled.');
    if (!hasPolicy(cmd.realm.create_web_public_stream_policy, actor)) throw errors.badRequest('Insufficient permission');
  }

  const events: ChannelEvent[] = [];
  const permission = c.is_private !== undefined || c.is_web_public !== undefined || c.history_public_to_subscribers !== undefined;
  if (permission) {
    const extra = { history_public_to_subscribers: history, is_web_public: isWebPublic };
    if (isPrivate !== stream.invite_only) events.push(changed(stream, 'invite_only', isPrivate, stream.invite_only, extra));
    if (history !== stream.history_public_to_subscribers) {
      events.push(changed(stream, 'history_public_to_subscribers', history, stream.history_public_to_subscribers));
    }
    if (isWebPublic !== stream.is_web_public) {
      events.push(changed(stream, 'is_web_public', isWebPublic, stream.is_web_public, { invite_only: isPrivate }));
    }
    const first = events.findIndex((e) => e.type === 'StreamPropertyChanged' && (e.data.property === 'invite_only' || e.data.property === 'is_web_public'));
    const event = events[first];
    if (event && event.type === 'StreamPropertyChanged') {
      const access = {
        before: { invite_only: stream.invite_only, is_web_public: stream.is_web_public },
        after: { invite_only: isPrivate, is_web_public: isWebPublic },
      };
      events[first] = { type: 'StreamPropertyChanged', data: { ...event.data, access } };
    }
  }
  if (c.is_default_stream !== undefined && c.is_default_stream !== stream.is_default) {
    if (!isAdminRole(actor.role)) throw errors.mustBeAdmin();
    events.push(changed(stream, 'is_default', c.is_default_stream, stream.is_default));
  }
  if (c.message_retention_days !== undefined) {
    if (actor.role !== Role.OWNER) throw errors.mustBeOwner();
    if (c.message_retention_days !== stream.message_retention_days) {
      events.push(changed(stream, 'message_retention_days', c.message_retention_days, stream.message_retention_days));
    }
  }
  if (c.description !== undefined && c.description !== stream.description) {
    events.push(changed(stream, 'description', c.description, stream.description, { rendered_description: c.rendered_description ?? '' }));
  }
  if (c.new_name !== undefined) {
    const name = checkStreamName(c.new_name);
    if (name === stream.name) throw errors.badRequest('Channel already has that name.');
    if (name.toLowerCase() !== stream.name.toLowerCase() && cmd.new_name_taken) throw errors.badRequest('Channel name already in use.');
    events.push(changed(stream, 'name', name, stream.name));
  }
  let postPolicy = c.stream_post_policy;
  if (c.is_announcement_only !== undefined && postPolicy === undefined) {
    postPolicy = c.is_announcement_only ? StreamPostPolicy.ADMINS : StreamPostPolicy.EVERYONE;
  }
  if (postPolicy !== undefined && postPolicy !== stream.stream_post_policy) {
    events.push(changed(stream, 'stream_post_policy', postPolicy, stream.stream_post_policy));
  }
  if (c.can_remove_subscribers_group !== undefined && c.can_remove_subscribers_group !== stream.can_remove_subscribers_group) {
    // Only a real change needs access to a private channel's members.
    if (stream.invite_only && !cmd.actor_subscribed) throw errors.invalidChannelId();
    events.push(changed(stream, 'can_remove_subscribers_group', c.can_remove_subscribers_group, stream.can_remove_subscribers_group));
  }
  return events;
}

/** Pure: archiving a channel (administrators only). */
export function decideArchiveStream(actor: ChannelActor, stream: StreamState & { name: string }, subscribed: boolean): ChannelEvent[] {
  checkCanManageStream(actor, stream, subscribed);
  return [{ type: 'StreamArchived', data: { stream_id: stream.stream_id, name: stream.name, was_default: stream.is_default } }];
}

/** A subscription colour: `#` and six hex digits; `name` is how the error names the parameter. */
export function checkColor(name: string, value: unknown): string {
  if (typeof value !== 'string') throw errors.badRequest(`${name} is not a string`);
  if (!/^#[0-9a-fA-F]{6}$/.test(value)) throw errors.badRequest(`${name} is not a valid hex color code`);
  return value;
}

/** The error for an unknown property, before anything else about the change is looked at. */
export function checkSubscriptionProperty(property: string): void {
  if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(property)) {
    throw errors.badRequest(`Unknown subscription property: ${property}`);
  }
}

export const SUBSCRIPTION_PROPERTIES = [
  'color', 'is_muted', 'in_home_view', 'pin_to_top', 'desktop_notifications', 'audible_notifications',
  'push_notifications', 'email_notifications', 'wildcard_mentions_notify',
] as const;

/** Pure: one subscription property change (in_home_view is the inverse of is_muted). */
export function decideSubscriptionProperty(
  stream_id: number,
  user_id: number,
  property: string,
  value: unknown,
): ChannelEvent {
  checkSubscriptionProperty(property);
  if (property === 'color') {
    return { type: 'SubscriptionPropertyChanged', data: { stream_id, user_id, property: 'color', value: checkColor('color', value) } };
  }
  if (typeof value !== 'boolean') throw errors.badRequest(`${property} is not a boolean`);
  if (property === 'in_home_view') {
    return { type: 'SubscriptionPropertyChanged', data: { stream_id, user_id, property: 'is_muted', value: !value } };
  }
  return {
    type: 'SubscriptionPropertyChanged',
    data: { stream_id, user_id, property: property as Exclude<(typeof SUBSCRIPTION_PROPERTIES)[number], 'in_home_view'>, value },
  };
}

/** Zulip's palette for new subscriptions: the first colour the user does not use yet. */
export const STREAM_ASSIGNMENT_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5', '#f5ce6e', '#c2726a',
  '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063', '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4',
  '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
];

export function pickColor(used: ReadonlySet<string>, index: number): string {
  const free = STREAM_ASSIGNMENT_COLORS.find((c) => !used.has(c));
  return free ?? STREAM_ASSIGNMENT_COLORS[index % STREAM_ASSIGNMENT_COLORS.length]!;
}

export function checkVisibilityPolicy(policy: number): void {
  if (!Object.values(VisibilityPolicy).includes(policy as 0)) throw new ApiError('BAD_REQUEST', 400, 'Invalid visibility_policy');
}
