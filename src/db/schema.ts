import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { BotStorageTables } from './schema/bot-storage.js';
import type { OutgoingWebhookTables } from './schema/outgoing-webhooks.js';
import type { TutorialStatusTables } from './schema/tutorial-status.js';
import type { DraftPlaygroundAttachmentPushTables } from './schema/drafts-playgrounds-attachments-push.js';
import type { MessageTables } from './schema/messages.js';
import type { RealmEmojiTables } from './schema/realm-emoji.js';
import type { ScheduledMessageTables } from './schema/scheduled-messages.js';
import type { MutedUsersTables } from './schema/muted-users.js';
import type { InvitesTables } from './schema/invites.js';
import type { PresenceTables } from './schema/presence.js';
import type { ForgettingTables } from './schema/forgetting.js';
import type { RealmAdminTables } from './schema/realm-admin.js';
import type { OnboardingStepsTables } from './schema/onboarding-steps.js';
import type { SubmessagesTables } from './schema/submessages.js';
import type { RealmExportsTables } from './schema/realm-exports.js';
import type { StoredFilesTables } from './schema/stored-files.js';

/** One interface per table; the Database type composes them. Read tables live beside the log. */
export interface EventsTable {
  position: number;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: JSONColumnType<Record<string, unknown>, string, string>;
  metadata: JSONColumnType<Record<string, unknown>, string, string>;
  hash: string;
  /** Chosen by the application since migration 0160 (version 2 rows hash it; see eventstore/recorded-at.ts). */
  recorded_at: ColumnType<Date, string | undefined, never>;
  /** 1: rows from before migration 0160; 2: the hash covers recorded_at (eventstore/hash.ts). */
  hash_version: ColumnType<number, number | undefined, never>;
}

/** Signed ranges of the log (migration 0160, eventstore/log-signing.ts). */
export interface LogSignaturesTable {
  position: number;
  from_position: number;
  hash: string;
  log_id: string;
  key_id: string;
  signature: string;
  signed_at: ColumnType<Date, string, never>;
}

/** The one row naming this log (migration 0096). */
export interface LogIdentityTable {
  log_id: string;
  created_at: ColumnType<Date, never, never>;
}

export interface CheckpointsTable {
  name: string;
  position: number;
  version: number;
}

export interface RealmsTable {
  id: number;
  string_id: string;
  name: string;
  url: string;
  date_created: number;
  properties: JSONColumnType<Record<string, unknown>, string, string>;
  user_settings_defaults: JSONColumnType<Record<string, unknown>, string, string>;
  /** migration 0177 */
  deactivated: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface UsersTable {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  is_system_bot: ColumnType<boolean, boolean | undefined, boolean>;
  bot_type: number | null;
  bot_owner_id: number | null;
  is_billing_admin: boolean;
  api_key: string;
  password_hash: string | null;
  timezone: string;
  date_joined: string;
  avatar_source: string;
  avatar_version: number;
  default_sending_stream_id: ColumnType<number | null, number | null | undefined, number | null>;
  default_events_register_stream_id: ColumnType<number | null, number | null | undefined, number | null>;
  default_all_public_streams: ColumnType<boolean, boolean | undefined, boolean>;
  settings: JSONColumnType<Record<string, unknown>, string, string>;
  profile_data: JSONColumnType<Record<string, { value: string; rendered_value?: string }>, string, string>;
  version: number;
}

export interface CustomProfileFieldsTable {
  id: number;
  realm_id: number;
  type: number;
  name: string;
  hint: string;
  field_data: string;
  order: number;
  display_in_profile_summary: boolean;
  required: Generated<boolean>;
}

export interface UserGroupsTable {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  is_system_group: boolean;
  deactivated: boolean;
  creator_id: number | null;
  date_created: number | null;
  /** The group whose members may mention this one; null: the default (see read/user-groups.ts). */
  can_mention_group: number | null;
}

export interface UserGroupMembersTable {
  group_id: number;
  user_id: number;
}

export interface UserGroupSubgroupsTable {
  group_id: number;
  subgroup_id: number;
}

export interface EventQueuesTable {
  id: string;
  user_id: number;
  realm_id: number;
  event_types: JSONColumnType<string[] | null, string, string>;
  narrow: JSONColumnType<unknown[], string, string>;
  options: JSONColumnType<Record<string, unknown>, string, string>;
  registered_position: number;
  lifespan_secs: number;
  created_at: number;
}

/** Consumer state of a queue (acknowledged cursor, last access); not a projection, kept across rebuilds. */
export interface EventQueueCursorsTable {
  queue_id: string;
  acked_id: number;
  last_access: number;
}

export interface StreamsTable {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  stream_post_policy: number;
  message_retention_days: number | null;
  can_remove_subscribers_group: number;
  creator_id: number | null;
  date_created: number;
  first_message_id: number | null;
  is_default: boolean;
  deactivated: boolean;
  version: number;
}

export interface SubscriptionsTable {
  user_id: number;
  stream_id: number;
  active: boolean;
  color: string;
  is_muted: boolean;
  pin_to_top: boolean;
  desktop_notifications: boolean | null;
  email_notifications: boolean | null;
  push_notifications: boolean | null;
  audible_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
  /** Version of the subscription-<stream_id>-<user_id> event stream (migration 0010). */
  version: Generated<number>;
}

export interface UserTopicsTable {
  user_id: number;
  stream_id: number;
  topic: string;
  visibility_policy: number;
  last_updated: number;
  /** The message whose key seals the topic in the event that set this row (null: the user set it). */
  message_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface LinkifiersTable {
  id: number;
  realm_id: number;
  pattern: string;
  url_template: string;
  order: number;
}

export interface AlertWordsTable {
  user_id: number;
  /** As the user typed it; matching is case-insensitive. */
  word: string;
  /** Its place in the user's list (the order the words were added). */
  ordinal: Generated<number>;
}

export interface SharedAreaTables {
  linkifiers: LinkifiersTable;
  alert_words: AlertWordsTable;
}

/**
 * Tables of the core and of each API area. An area declares its table interfaces and an
 * `<Area>Tables` interface in this file (or in src/db/schema/<area>.ts) and adds it to `extends`.
 */
export interface Database extends ChannelTables, SharedAreaTables, DraftPlaygroundAttachmentPushTables, MessageTables, RealmEmojiTables,
  ScheduledMessageTables, MutedUsersTables, InvitesTables, PresenceTables, ForgettingTables, BotStorageTables, TutorialStatusTables,
  OnboardingStepsTables, SubmessagesTables, RealmExportsTables, StoredFilesTables {
  events: EventsTable;
  log_identity: LogIdentityTable;
  log_signatures: LogSignaturesTable;
  checkpoints: CheckpointsTable;
  realms: RealmsTable;
  users: UsersTable;
  custom_profile_fields: CustomProfileFieldsTable;
  user_groups: UserGroupsTable;
  user_group_members: UserGroupMembersTable;
  user_group_subgroups: UserGroupSubgroupsTable;
  event_queues: EventQueuesTable;
  event_queue_cursors: EventQueueCursorsTable;
}

/** Organization administration's tables (declared apart so the list above stays as it is). */
export interface Database extends RealmAdminTables {}

/** Outgoing webhook bots' services and unanswered triggers. */
export interface Database extends OutgoingWebhookTables {}

export interface ChannelTables {
  streams: StreamsTable;
  subscriptions: SubscriptionsTable;
  user_topics: UserTopicsTable;
}

export type { Generated };
