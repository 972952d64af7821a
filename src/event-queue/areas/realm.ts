import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { DataOf } from '../../domain/events.js';

export const LIMITS = {
  max_message_length: 10_000,
  max_stream_name_length: 60,
  max_stream_description_length: 1_024,
  max_topic_length: 60,
  event_queue_longpoll_timeout_seconds: 90,
};

registerSection('realm', async ({ realm, config }) => {
  const state: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(realm.properties)) state[`realm_${key}`] = value;
  return {
    ...state,
    ...LIMITS,
    realm_name: realm.name,
    realm_url: realm.url,
    realm_uri: realm.url,
    realm_date_created: Number(realm.date_created),
    realm_icon_url: `${realm.url}/static/images/logo/zulip-icon-128x128.png`,
    realm_authentication_methods: { Email: true, Dev: false, password: true },
    realm_available_video_chat_providers: {},
    realm_is_zephyr_mirror_realm: false,
    realm_push_notifications_enabled: false,
    realm_empty_topic_display_name: 'general chat',
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
    demo_organization_scheduled_deletion_date: undefined,
  };
});

// user_settings and realm_user_settings_defaults: see ./settings.ts.

registerTranslator('RealmPropertiesChanged', async (event) => {
  const d = event.data as DataOf<'RealmPropertiesChanged'>;
  return { audience: 'realm', forUser: () => [{ type: 'realm', op: 'update_dict', property: 'default', data: d.changes }] };
});
