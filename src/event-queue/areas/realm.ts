import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { DataOf } from '../../domain/events.js';
import type { Db } from '../../db/database.js';
import { DEFAULT_REALM_PROPERTIES, UNREPORTED_REALM_PROPERTIES } from '../../domain/realm/defaults.js';
import {
  DEFAULT_JITSI_SERVER_URL,
  EMOJI_DATA_PATH,
  GIPHY_RATING_OPTIONS,
  SEARCH_STOP_WORDS,
  SUPPORTED_PERMISSION_SETTINGS,
  VIDEO_CHAT_PROVIDERS,
} from '../../domain/realm/server-catalogs.js';
import { botDomain, type RealmRow } from '../../read/realm.js';
import { realmImageState } from '../../services/realm-images.js';

export const LIMITS = {
  max_message_length: 10_000,
  max_stream_name_length: 60,
  max_stream_description_length: 1_024,
  max_topic_length: 60,
  event_queue_longpoll_timeout_seconds: 90,
};

const GROUP_VALUED = Object.keys(SUPPORTED_PERMISSION_SETTINGS.realm);

/**
 * The organization's settings as /register reports them: the stored value, or the default for a
 * setting added after the organization was created; a group-valued setting names a system group
 * by default and is reported as that group's id.
 */
async function reportedProperties(db: Db, realm: RealmRow): Promise<Record<string, unknown>> {
  const properties: Record<string, unknown> = { ...DEFAULT_REALM_PROPERTIES, ...(realm.properties as Record<string, unknown>) };
  const named = GROUP_VALUED.filter((key) => typeof properties[key] === 'string');
  if (named.length > 0) {
    const groups = await db
      .selectFrom('user_groups')
      .select(['id', 'name'])
      .where('realm_id', '=', realm.id)
      .where('is_system_group', '=', true)
      .execute();
    const idOf = new Map(groups.map((g) => [g.name, g.id]));
    for (const key of named) properties[key] = idOf.get(String(properties[key])) ?? null;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(properties)) {
    if (!UNREPORTED_REALM_PROPERTIES.has(key)) out[`realm_${key}`] = value;
  }
  return out;
}

// Email and password is this server's one way to log in.
const AUTHENTICATION_METHODS = { Email: { enabled: true, available: true } };

registerSection('realm', async ({ trx, realm, config }) => {
  const properties = await reportedProperties(trx as Db, realm);
  return {
    ...properties,
    ...LIMITS,
    realm_name: realm.name,
    realm_url: realm.url,
    realm_uri: realm.url,
    realm_date_created: Number(realm.date_created),
    ...realmImageState(realm),
    realm_bot_domain: botDomain(realm),
    realm_authentication_methods: AUTHENTICATION_METHODS,
    realm_email_auth_enabled: AUTHENTICATION_METHODS.Email.enabled,
    realm_password_auth_enabled: AUTHENTICATION_METHODS.Email.enabled,
    realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
    realm_is_zephyr_mirror_realm: false,
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_upload_quota_mib: null,
    realm_default_external_accounts: {},
    server_jitsi_server_url: DEFAULT_JITSI_SERVER_URL,
    jitsi_server_url: properties.realm_jitsi_server_url ?? DEFAULT_JITSI_SERVER_URL,
    giphy_rating_options: GIPHY_RATING_OPTIONS,
    server_emoji_data_url: `${realm.url}${EMOJI_DATA_PATH}`,
    server_supported_permission_settings: SUPPORTED_PERMISSION_SETTINGS,
    max_file_upload_size_mib: 25,
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    server_generation: 1,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 140,
    server_typing_started_expiry_period_milliseconds: 15_000,
    server_typing_stopped_wait_period_milliseconds: 5_000,
    server_typing_started_wait_period_milliseconds: 10_000,
    server_needs_upgrade: false,
    server_web_public_streams_enabled: config.webPublicStreamsEnabled ?? false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    settings_send_digest_emails: false,
    development_environment: false,
    password_min_length: 6,
    password_min_guesses: 0,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: '',
  };
});

// Sections for features this server does not offer: each is the documented empty answer.
registerSection('realm_embedded_bots', async () => ({ realm_embedded_bots: [] }));
registerSection('realm_incoming_webhook_bots', async () => ({ realm_incoming_webhook_bots: [] }));
registerSection('video_calls', async () => ({ has_zoom_token: false }));
// The real server sends an empty key when no GIPHY key is configured.
registerSection('giphy', async () => ({ giphy_api_key: '' }));
registerSection('stop_words', async () => ({ stop_words: SEARCH_STOP_WORDS }));

// user_settings and realm_user_settings_defaults: see ./settings.ts.

registerTranslator('RealmPropertiesChanged', async (event) => {
  const d = event.data as DataOf<'RealmPropertiesChanged'>;
  const reported = Object.fromEntries(Object.entries(d.changes).filter(([key]) => !UNREPORTED_REALM_PROPERTIES.has(key)));
  if (Object.keys(reported).length === 0) return null;
  return { audience: 'realm', forUser: () => [{ type: 'realm', op: 'update_dict', property: 'default', data: reported }] };
});
