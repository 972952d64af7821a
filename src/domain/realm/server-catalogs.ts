import { createHash } from 'node:crypto';
import { emojiDataDocument } from '../../emoji/catalogue.js';
/** Server-wide facts that /register reports beside the organization's own settings. */

/**
 * The video call providers an organization may pick (realm_available_video_chat_providers): the
 * real server adds Zoom (3) and BigBlueButton (4) only when configured for them.
 */
export const VIDEO_CHAT_PROVIDERS = {
  disabled: { name: 'None', id: 0 },
  jitsi_meet: { name: 'Jitsi Meet', id: 1 },
} as const;

/** GIPHY content ratings an administrator may pick; `id` is the realm's giphy_rating value. */
export const GIPHY_RATING_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIPHY content rated Y (very young audience)', id: 1 },
  g: { name: 'Allow GIPHY content rated G (general audience)', id: 2 },
  pg: { name: 'Allow GIPHY content rated PG (parental guidance)', id: 3 },
  pg13: { name: 'Allow GIPHY content rated PG-13 (parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIPHY content rated R (restricted)', id: 5 },
} as const;

/**
 * The group-valued settings this server has, at feature level 247: which groups each may name
 * and its default, as clients need them to offer the right choices.
 */
export const SUPPORTED_PERMISSION_SETTINGS = {
  realm: {
    create_multiuse_invite_group: {
      require_system_group: true,
      allow_internet_group: false,
      allow_owners_group: false,
      allow_nobody_group: true,
      allow_everyone_group: false,
      default_group_name: 'role:administrators',
      id_field_name: 'create_multiuse_invite_group_id',
      default_for_system_groups: null,
      allowed_system_groups: [],
    },
    can_access_all_users_group: {
      require_system_group: true,
      allow_internet_group: false,
      allow_owners_group: false,
      allow_nobody_group: false,
      allow_everyone_group: true,
      default_group_name: 'role:everyone',
      id_field_name: 'can_access_all_users_group_id',
      default_for_system_groups: null,
      allowed_system_groups: ['role:everyone', 'role:members'],
    },
  },
  stream: {
    can_remove_subscribers_group: {
      require_system_group: false,
      allow_internet_group: false,
      allow_owners_group: false,
      allow_nobody_group: false,
      allow_everyone_group: true,
      default_group_name: 'role:administrators',
      id_field_name: 'can_remove_subscribers_group_id',
      default_for_system_groups: null,
      allowed_system_groups: [],
    },
  },
  group: {
    can_mention_group: {
      require_system_group: false,
      allow_internet_group: false,
      allow_owners_group: false,
      allow_nobody_group: true,
      allow_everyone_group: true,
      default_group_name: 'role:everyone',
      id_field_name: 'can_mention_group_id',
      default_for_system_groups: 'role:nobody',
      allowed_system_groups: [],
    },
  },
} as const;

/**
 * Words full-text search ignores: message search uses PostgreSQL's `english` text search
 * configuration, whose Snowball stop list this is.
 */
export const SEARCH_STOP_WORDS: readonly string[] = [
  'i', 'me', 'my', 'myself', 'we', 'our', 'ours', 'ourselves', 'you', 'your', 'yours', 'yourself', 'yourselves',
  'he', 'him', 'his', 'himself', 'she', 'her', 'hers', 'herself', 'it', 'its', 'itself', 'they', 'them', 'their',
  'theirs', 'themselves', 'what', 'which', 'who', 'whom', 'this', 'that', 'these', 'those', 'am', 'is', 'are',
  'was', 'were', 'be', 'been', 'being', 'have', 'has', 'had', 'having', 'do', 'does', 'did', 'doing', 'a', 'an',
  'the', 'and', 'but', 'if', 'or', 'because', 'as', 'until', 'while', 'of', 'at', 'by', 'for', 'with', 'about',
  'against', 'between', 'into', 'through', 'during', 'before', 'after', 'above', 'below', 'to', 'from', 'up',
  'down', 'in', 'out', 'on', 'off', 'over', 'under', 'again', 'further', 'then', 'once', 'here', 'there', 'when',
  'where', 'why', 'how', 'all', 'any', 'both', 'each', 'few', 'more', 'most', 'other', 'some', 'such', 'no', 'nor',
  'not', 'only', 'own', 'same', 'so', 'than', 'too', 'very', 's', 't', 'can', 'will', 'just', 'don', 'should', 'now',
];

/** The Jitsi server video calls use unless the organization names its own. */
export const DEFAULT_JITSI_SERVER_URL = 'https://meet.jit.si';

/**
 * Public files the server serves (routes/static-assets.ts) and /register points at. The emoji data's path
 * carries a hash of its content, as the real server's does, so a client's cached copy never outlives a
 * change of the emoji names.
 */
export const EMOJI_DATA = JSON.stringify(emojiDataDocument());
export const EMOJI_DATA_PATH = `/static/generated/emoji/emoji_api.${createHash('sha256').update(EMOJI_DATA).digest('hex').slice(0, 12)}.json`;
export const ORGANIZATION_LOGO_PATH = '/static/images/logo/zulip-org-logo.svg';
export const ORGANIZATION_ICON_PATH = '/static/images/logo/zulip-icon-128x128.png';
