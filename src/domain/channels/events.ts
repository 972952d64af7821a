import type { Event } from '../event-types.js';

export type StreamProperties = {
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  stream_post_policy: number;
  message_retention_days: number | null;
  can_remove_subscribers_group: number;
};

export type StreamCreated = Event<'StreamCreated', StreamProperties & {
  stream_id: number;
  realm_id: number;
  creator_id: number | null;
  date_created: number;
  is_default: boolean;
}>;
/** One property of a channel changed (name, description, invite_only, ...); `value` is the new value. */
export type StreamPropertyChanged = Event<'StreamPropertyChanged', {
  stream_id: number;
  property: keyof StreamProperties | 'is_default' | 'first_message_id';
  value: unknown;
  /** The value before the change (renames name the channel by its old name; privacy changes move access). */
  old_value?: unknown;
  /** Extra fields the client event carries (e.g. rendered_description with description). */
  extra?: Record<string, unknown>;
  /**
   * On the first event of a privacy change (invite_only / is_web_public): the access flags before
   * and after the whole change, so event queues can tell who gains or loses sight of the channel.
   */
  access?: { before: StreamAccessFlags; after: StreamAccessFlags };
}>;
export interface StreamAccessFlags {
  invite_only: boolean;
  is_web_public: boolean;
}
export type StreamArchived = Event<'StreamArchived', { stream_id: number; name: string; was_default?: boolean }>;
export type UserSubscribed = Event<'UserSubscribed', { stream_id: number; user_id: number; color: string }>;
export type UserUnsubscribed = Event<'UserUnsubscribed', { stream_id: number; user_id: number }>;
export type SubscriptionPropertyChanged = Event<'SubscriptionPropertyChanged', {
  stream_id: number;
  user_id: number;
  property: 'color' | 'is_muted' | 'pin_to_top' | 'desktop_notifications' | 'email_notifications' | 'push_notifications' | 'audible_notifications' | 'wildcard_mentions_notify';
  value: unknown;
}>;
export type UserTopicPolicySet = Event<'UserTopicPolicySet', {
  user_id: number;
  stream_id: number;
  topic: string;
  visibility_policy: number;
  last_updated: number;
  /**
   * Set by a send or a topic move: the message whose key seals the topic, so the preference is
   * forgotten with that message (src/services/topic-policy-source.ts). Absent: the user set it.
   */
  message_id?: number;
}>;

/**
 * Recorded on `channel-name-<realm_id>-<lower-case name>` when a channel takes a name (creation,
 * rename): concurrent claims of one name conflict on that stream's version, so the unique-name
 * rule holds without a database constraint failing inside a projection.
 */
export type StreamNameReserved = Event<'StreamNameReserved', { realm_id: number; name: string; stream_id: number }>;

export type ChannelEvent =
  | StreamNameReserved
  | StreamCreated
  | StreamPropertyChanged
  | StreamArchived
  | UserSubscribed
  | UserUnsubscribed
  | SubscriptionPropertyChanged
  | UserTopicPolicySet;
