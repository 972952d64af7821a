import type { SettingName } from './defaults.js';

/** What values a setting takes: its JSON type and, where the API fixes them, the allowed values or bounds. */
export type SettingSpec =
  | { type: 'boolean' }
  | { type: 'integer'; enum?: readonly number[]; minimum?: number; maximum?: number }
  | { type: 'string'; enum?: readonly string[] };

const bool = { type: 'boolean' } as const;
const oneOf = (...values: number[]): SettingSpec => ({ type: 'integer', enum: values });
const words = (...values: string[]): SettingSpec => ({ type: 'string', enum: values });
/** The real server stores these in a PostgreSQL positive smallint and checks nothing more. */
const smallint: SettingSpec = { type: 'integer', minimum: 0, maximum: 32_767 };

/** One entry per personal setting (timezone, a column of its own, is handled beside these). */
export const SETTING_SPECS: Record<SettingName, SettingSpec> = {
  twenty_four_hour_time: bool,
  dense_mode: bool,
  web_mark_read_on_scroll_policy: oneOf(1, 2, 3),
  web_channel_default_view: oneOf(1, 2),
  starred_message_counts: bool,
  receives_typing_notifications: bool,
  fluid_layout_width: bool,
  high_contrast_mode: bool,
  web_font_size_px: smallint,
  web_line_height_percent: smallint,
  color_scheme: oneOf(1, 2, 3),
  translate_emoticons: bool,
  display_emoji_reaction_users: bool,
  // Checked against the declared languages by the decider (the message names the setting).
  default_language: { type: 'string' },
  web_home_view: words('recent_topics', 'inbox', 'all_messages'),
  web_escape_navigates_to_home_view: bool,
  left_side_userlist: bool,
  emojiset: words('vendor1', 'vendor1-blob', 'vendor2', 'text'),
  demote_inactive_streams: oneOf(1, 2, 3),
  user_list_style: oneOf(1, 2, 3),
  web_animate_image_previews: words('always', 'on_hover', 'never'),
  web_stream_unreads_count_display_policy: oneOf(1, 2, 3),
  web_navigate_to_sent_message: bool,
  enter_sends: bool,
  enable_drafts_synchronization: bool,
  enable_stream_desktop_notifications: bool,
  enable_stream_email_notifications: bool,
  enable_stream_push_notifications: bool,
  enable_stream_audible_notifications: bool,
  // Checked against the available sounds by the decider.
  notification_sound: { type: 'string' },
  enable_desktop_notifications: bool,
  enable_sounds: bool,
  enable_followed_topic_desktop_notifications: bool,
  enable_followed_topic_email_notifications: bool,
  enable_followed_topic_push_notifications: bool,
  enable_followed_topic_audible_notifications: bool,
  enable_followed_topic_wildcard_mentions_notify: bool,
  // Bounded by the decider (1 second to 1 week) with the real server's message.
  email_notifications_batching_period_seconds: { type: 'integer' },
  enable_offline_email_notifications: bool,
  enable_offline_push_notifications: bool,
  enable_online_push_notifications: bool,
  enable_digest_emails: bool,
  enable_marketing_emails: bool,
  enable_login_emails: bool,
  message_content_in_email_notifications: bool,
  pm_content_in_desktop_notifications: bool,
  wildcard_mentions_notify: bool,
  desktop_icon_count_display: oneOf(1, 2, 3, 4),
  realm_name_in_email_notifications_policy: oneOf(1, 2, 3),
  automatically_follow_topics_policy: oneOf(1, 2, 3, 4),
  automatically_unmute_topics_in_muted_streams_policy: oneOf(1, 2, 3, 4),
  automatically_follow_topics_where_mentioned: bool,
  presence_enabled: bool,
  send_private_typing_notifications: bool,
  send_stream_typing_notifications: bool,
  send_read_receipts: bool,
  email_address_visibility: oneOf(1, 2, 3, 4, 5),
};

/**
 * Personal settings an organization's defaults for new users do not take (the real server's
 * PATCH /realm/user_settings_defaults lists them as unsupported): the language follows the
 * organization's own, and security and marketing mail stay each user's choice.
 */
export const NOT_IN_REALM_DEFAULTS: ReadonlySet<string> = new Set(['default_language', 'enable_login_emails', 'enable_marketing_emails']);
