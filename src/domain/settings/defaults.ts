/**
 * Every personal setting and its default for a new organization (values as the real server's
 * defaults). An organization's defaults start from these; a new user starts from the organization's.
 * `timezone` is personal, not an organization default.
 */
export const DEFAULT_USER_SETTINGS = {
  twenty_four_hour_time: false,
  dense_mode: true,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  starred_message_counts: true,
  receives_typing_notifications: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  web_font_size_px: 14,
  web_line_height_percent: 122,
  color_scheme: 1,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: 'en',
  web_home_view: 'inbox',
  web_escape_navigates_to_home_view: true,
  left_side_userlist: false,
  emojiset: 'vendor1',
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_animate_image_previews: 'always',
  web_stream_unreads_count_display_policy: 2,
  web_navigate_to_sent_message: true,
  enter_sends: false,
  enable_drafts_synchronization: true,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: 'zulip',
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  presence_enabled: true,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  email_address_visibility: 1,
} as const satisfies Record<string, boolean | number | string>;

export type UserSettings = { -readonly [K in keyof typeof DEFAULT_USER_SETTINGS]: (typeof DEFAULT_USER_SETTINGS)[K] extends boolean ? boolean : (typeof DEFAULT_USER_SETTINGS)[K] extends number ? number : string };

export type SettingName = keyof typeof DEFAULT_USER_SETTINGS;
export const SETTING_NAMES = Object.keys(DEFAULT_USER_SETTINGS) as SettingName[];

/** A setting from a stored settings object, or its default when the object predates the setting. */
export function settingValue(stored: Record<string, unknown>, name: SettingName): unknown {
  return Object.hasOwn(stored, name) ? stored[name] : DEFAULT_USER_SETTINGS[name];
}

/** Sound files the server offers; `none` is accepted as well and means no sound. */
export const AVAILABLE_NOTIFICATION_SOUNDS = ['chime', 'chirp', 'ding', 'zulip'];
/** The emoji sets SPEC.md names (modern, classic, a second vendor, plain text). */
export const EMOJISET_CHOICES = [
  { key: 'vendor1', text: 'Modern' },
  { key: 'vendor1-blob', text: 'Classic' },
  { key: 'vendor2', text: 'Vendor 2' },
  { key: 'text', text: 'Plain text' },
];

/**
 * Settings that clients without the `user_settings_object` capability read at the top level of
 * /register and hear about through the legacy events (the real server froze these lists at
 * feature level 89; newer settings only travel in `user_settings`).
 */
export const LEGACY_DISPLAY_SETTINGS: readonly string[] = [
  'color_scheme', 'default_language', 'demote_inactive_streams', 'dense_mode', 'emojiset', 'enable_drafts_synchronization',
  'enter_sends', 'fluid_layout_width', 'high_contrast_mode', 'left_side_userlist', 'starred_message_counts',
  'translate_emoticons', 'twenty_four_hour_time', 'web_home_view', 'timezone',
];
export const LEGACY_NOTIFICATION_SETTINGS: readonly string[] = [
  'enable_desktop_notifications', 'enable_digest_emails', 'enable_login_emails', 'enable_marketing_emails',
  'email_notifications_batching_period_seconds', 'enable_offline_email_notifications', 'enable_offline_push_notifications',
  'enable_online_push_notifications', 'enable_sounds', 'enable_stream_audible_notifications', 'enable_stream_desktop_notifications',
  'enable_stream_email_notifications', 'enable_stream_push_notifications', 'message_content_in_email_notifications',
  'notification_sound', 'pm_content_in_desktop_notifications', 'desktop_icon_count_display',
  'realm_name_in_email_notifications_policy', 'presence_enabled', 'wildcard_mentions_notify',
];
