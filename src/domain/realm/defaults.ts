/** Organization-level properties reported in /register's `realm` section (as realm_<name>). */
export const DEFAULT_REALM_PROPERTIES = {
  description: 'An event-sourced Zulip-compatible organization.',
  invite_required: true,
  emails_restricted_to_domains: false,
  waiting_period_threshold: 0,
  message_retention_days: -1,
  allow_message_editing: true,
  message_content_edit_limit_seconds: 600,
  move_messages_within_stream_limit_seconds: 604800,
  move_messages_between_streams_limit_seconds: 604800,
  allow_edit_history: true,
  edit_topic_policy: 5,
  delete_own_message_policy: 5,
  message_content_delete_limit_seconds: 600,
  mandatory_topics: false,
  enable_spectator_access: false,
  create_public_stream_policy: 1,
  create_private_stream_policy: 1,
  create_web_public_stream_policy: 7,
  invite_to_stream_policy: 1,
  invite_to_realm_policy: 1,
  user_group_edit_policy: 1,
  private_message_policy: 1,
  wildcard_mention_policy: 5,
  bot_creation_policy: 1,
  email_address_visibility: 1,
  default_language: 'en',
  default_code_block_language: '',
  digest_emails_enabled: false,
  digest_weekday: 1,
  send_welcome_emails: true,
  message_content_allowed_in_email_notifications: true,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  video_chat_provider: 1,
  giphy_rating: 2,
  want_advertise_in_communities_directory: false,
  org_type: 0,
  plan_type: 1,
  enable_read_receipts: true,
  enable_guest_user_indicator: true,
  move_messages_between_streams_policy: 1,
  night_logo_source: 'D',
  logo_source: 'D',
  icon_source: 'G',
  presence_disabled: false,
  emoji_reactions_enabled: true,
  add_custom_emoji_policy: 1,
  require_unique_names: false,
  name_changes_disabled: false,
  email_changes_disabled: false,
  avatar_changes_disabled: false,
  disallow_disposable_email_addresses: true,
  // -1: the automated announcement is off (no channel chosen).
  new_stream_announcements_stream_id: -1,
  signup_announcements_stream_id: -1,
  zulip_update_announcements_stream_id: -1,
  // null: use the server's Jitsi (server_jitsi_server_url).
  jitsi_server_url: null,
  // Group-valued settings name a system group; /register reports that group's id.
  create_multiuse_invite_group: 'role:administrators',
  can_access_all_users_group: 'role:everyone',
} as const;

/**
 * Properties the server keeps for its own rules that /register does not report at our feature
 * level: email_address_visibility became a per-user setting (feature level 163), and
 * emoji_reactions_enabled has no realm_* key in any documented level.
 */
export const UNREPORTED_REALM_PROPERTIES: ReadonlySet<string> = new Set(['email_address_visibility', 'emoji_reactions_enabled',
  // Each uploaded icon or logo's version, for its URL (register reports the URLs).
  'icon_version', 'logo_version', 'night_logo_version']);
