import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { normalizeNarrow } from '../domain/queues/narrow.js';
import { Role } from '../domain/roles.js';
import { STREAM_ASSIGNMENT_COLORS } from '../domain/channels/decider.js';
import { formatSubscription, listWebPublicStreams, type SubscriptionRow } from '../read/channels.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { avatarUrlFor, formatUser, listUsers, type UserRow } from '../read/users.js';
import { listSystemBots } from '../services/system-bots.js';
import type { ServiceContext } from '../services/context.js';
import { spectatorViewer, SPECTATOR_ID, type StreamRow } from '../visibility.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.js';
import { CUSTOM_PROFILE_FIELD_TYPES, userPermissions } from './areas/users.js';
import type { RegisterParams } from './queue-service.js';
import { knownSections, sectionFetcher, type SectionContext } from './sections.js';
import type { QueueOptions } from './types.js';

/**
 * The settings a spectator's state is built with (the real server's unsaved stand-in UserProfile):
 * a guest, as most guest restrictions apply to spectators, with every personal setting at its
 * default but the language (the organization's) and the home view (recent conversations). It is
 * no account: its id is the spectator's (SPECTATOR_ID), which no account has.
 */
export function spectatorSettingsUser(realm: RealmRow): UserRow {
  const properties = realm.properties as Record<string, unknown>;
  return {
    id: SPECTATOR_ID,
    realm_id: realm.id,
    email: 'username@example.com',
    delivery_email: 'username@example.com',
    full_name: 'Anonymous User',
    role: Role.GUEST,
    is_active: true,
    is_bot: false,
    is_system_bot: false,
    bot_type: null,
    bot_owner_id: null,
    is_billing_admin: false,
    api_key: '',
    password_hash: null,
    timezone: '',
    date_joined: new Date(0).toISOString(),
    avatar_source: 'G',
    avatar_version: 1,
    default_sending_stream_id: null,
    default_events_register_stream_id: null,
    default_all_public_streams: false,
    settings: { default_language: properties.default_language ?? 'en', web_home_view: 'recent_topics' },
    profile_data: {},
    version: 0,
  };
}

type SpectatorFetcher = (ctx: SectionContext) => Promise<Record<string, unknown>>;

/** Sections whose registered fetcher reads only the organization, or the settings user's own row (settings, role). */
const SHARED = 'shared';

const empty = (state: Record<string, unknown>): SpectatorFetcher => async () => state;

/**
 * What a spectator gets of each /register section (the real server's fetch_initial_state_data
 * without a user): the organization's public configuration, the web-public channels as if
 * subscribed, every account without real addresses or profile data, and nothing personal. Every
 * known section is listed (a test holds this): a section added later is served to spectators only
 * once someone has decided here what they may see of it.
 */
const SPECTATOR_SECTIONS: Record<string, typeof SHARED | SpectatorFetcher> = {
  realm_domains: SHARED,
  // Guests (and so spectators) get no default channel groups, nor default channels.
  default_stream_groups: SHARED,
  default_streams: SHARED,
  scheduled_messages: empty({ scheduled_messages: [] }),
  realm_bot: empty({ realm_bots: [] }),
  realm_user: realmUserSection,
  custom_profile_fields: empty({ custom_profile_fields: [], custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES }),
  realm: realmSection,
  realm_embedded_bots: SHARED,
  realm_incoming_webhook_bots: SHARED,
  video_calls: SHARED,
  giphy: SHARED,
  stop_words: SHARED,
  user_settings: SHARED,
  update_display_settings: SHARED,
  update_global_notifications: SHARED,
  realm_user_settings_defaults: SHARED,
  realm_linkifiers: SHARED,
  realm_filters: SHARED,
  realm_emoji: SHARED,
  realm_user_groups: SHARED,
  realm_playgrounds: SHARED,
  subscription: subscriptionSection,
  // include_streams is off for spectators: no `streams`.
  stream: empty({}),
  user_topic: empty({ user_topics: [] }),
  muted_topics: async ({ wanted }) => (wanted?.has('user_topic') ? {} : { muted_topics: [] }),
  alert_words: empty({ alert_words: [] }),
  message: empty({ max_message_id: -1 }),
  // Every message is read to a spectator.
  update_message_flags: async ({ wanted }) => (wanted && !wanted.has('message')
    ? {}
    : { unread_msgs: { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false } }),
  recent_private_conversations: empty({ recent_private_conversations: [] }),
  starred_messages: empty({ starred_messages: [] }),
  drafts: empty({ drafts: [] }),
  presence: async () => ({ presences: {}, server_timestamp: Date.now() / 1000 }),
  user_status: empty({ user_status: {} }),
  onboarding_steps: empty({ onboarding_steps: [] }),
  muted_users: empty({ muted_users: [] }),
};

/** The sections SPECTATOR_SECTIONS decides (for the test that every known section is decided). */
export function spectatorSectionNames(): string[] {
  return Object.keys(SPECTATOR_SECTIONS);
}

/**
 * The organization's settings as for anyone, but with the features spectators cannot use shown
 * as off: editing, topic editing and deleting for administrators only, presence disabled.
 */
async function realmSection(ctx: SectionContext): Promise<Record<string, unknown>> {
  const state = await sectionFetcher('realm')!(ctx);
  return {
    ...state,
    realm_allow_message_editing: false,
    realm_edit_topic_policy: 2,
    realm_delete_own_message_policy: 2,
    realm_presence_disabled: true,
  };
}

/** Every account as a spectator may see it (no real address, no profile data), and the stand-in's own fields. */
async function realmUserSection({ trx, user, realm, options, config }: SectionContext): Promise<Record<string, unknown>> {
  const db = trx as Db;
  const viewer = spectatorViewer(realm.id);
  const host = realmHost(realm);
  const fmt = (u: UserRow) => {
    const out = formatUser(u, viewer, {
      clientGravatar: false,
      includeCustomProfileFields: false,
      realmHost: host,
      avatarUrlOptional: options.client_capabilities.user_avatar_url_field_optional,
    });
    delete out.is_active;
    return out;
  };
  const users = await listUsers(db, realm.id);
  return {
    realm_users: users.filter((u) => u.is_active).map(fmt),
    realm_non_active_users: users.filter((u) => !u.is_active).map(fmt),
    cross_realm_bots: (await listSystemBots(db, realm.id)).map((bot) => ({ ...fmt(bot), is_system_bot: true })),
    user_id: user.id,
    email: user.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
    is_admin: false,
    is_owner: false,
    is_moderator: false,
    is_guest: true,
    is_billing_admin: false,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrlFor(user, true, false),
    avatar_url_medium: avatarUrlFor(user, true, false, true),
    ...userPermissions(user, realm, config.webPublicStreamsEnabled ?? false, new Date()),
  };
}

const WEEK_SECONDS = 7 * 24 * 3600;

/**
 * The web-public channels as subscriptions of a new user (the real server's get_web_public_subs):
 * colors in turn, notifications on, nothing muted or pinned, no subscribers; the weekly traffic
 * as that function computes it without traffic data (0, or null for a channel younger than a week).
 */
async function subscriptionSection({ trx, realm }: SectionContext): Promise<Record<string, unknown>> {
  const streams = await listWebPublicStreams(trx as Db, realm.id);
  const now = Math.floor(Date.now() / 1000);
  const subscriptions = streams.map((stream: StreamRow, i) => {
    const sub = {
      color: STREAM_ASSIGNMENT_COLORS[i % STREAM_ASSIGNMENT_COLORS.length]!,
      is_muted: false,
      pin_to_top: false,
      desktop_notifications: true,
      email_notifications: true,
      push_notifications: true,
      audible_notifications: true,
      wildcard_mentions_notify: true,
    } as SubscriptionRow;
    return formatSubscription(stream, sub, now - Number(stream.date_created) >= WEEK_SECONDS ? 0 : null);
  });
  return { subscriptions, unsubscribed: [], never_subscribed: [] };
}

/**
 * POST /register for a spectator (the real server's do_events_register without a user): no event
 * queue (queue_id null, no last_event_id), only the state. client_gravatar and include_subscribers
 * must be off for an anonymous request.
 */
export async function registerSpectator(ctx: ServiceContext, realm: RealmRow, params: RegisterParams): Promise<Record<string, unknown>> {
  if (params.client_gravatar === true) throw errors.badRequest("Invalid 'client_gravatar' parameter for anonymous request");
  if (params.include_subscribers === true || params.include_subscribers === 'partial') {
    throw errors.badRequest("Invalid 'include_subscribers' parameter for anonymous request");
  }
  const options: QueueOptions = {
    apply_markdown: params.apply_markdown ?? false,
    client_gravatar: false,
    slim_presence: true,
    all_public_streams: false,
    include_subscribers: false,
    client_capabilities: params.client_capabilities ?? {},
    narrow: normalizeNarrow(params.narrow),
    event_types: params.event_types ?? null,
  };
  const wantedNames = params.fetch_event_types ?? params.event_types;
  const ctxOf: SectionContext = {
    trx: ctx.db,
    user: spectatorSettingsUser(realm),
    realm,
    options,
    config: ctx.config,
    wanted: wantedNames ? new Set(wantedNames) : null,
  };
  const state: Record<string, unknown> = {};
  for (const name of knownSections()) {
    if (ctxOf.wanted && !ctxOf.wanted.has(name)) continue;
    const decided = SPECTATOR_SECTIONS[name];
    // Not decided for spectators: left out rather than guessed.
    if (decided === undefined) continue;
    const fetch = decided === SHARED ? sectionFetcher(name)! : decided;
    Object.assign(state, await fetch(ctxOf));
  }
  return {
    queue_id: null,
    zulip_version: ZULIP_VERSION,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_merge_base: ZULIP_MERGE_BASE,
    ...state,
  };
}
