import type { Event } from '../event-types.js';

export type RealmCreated = Event<'RealmCreated', {
  realm_id: number;
  string_id: string;
  name: string;
  url: string;
  date_created: number;
  properties: Record<string, unknown>;
  user_settings_defaults: Record<string, unknown>;
  /**
   * Present (true) when the organization was created to get the real server's initial content
   * (system bots, channels, welcome messages); organizations created before it existed never get it.
   */
  full_setup?: boolean;
}>;

export type UserGroupCreated = Event<'UserGroupCreated', {
  group_id: number;
  realm_id: number;
  name: string;
  description: string;
  is_system_group: boolean;
  members: number[];
  subgroups: number[];
  creator_id: number | null;
  date_created: number;
  /** Set when the creator chose who may mention the group; absent means the default. */
  can_mention_group?: number;
}>;

/** Organization settings (the realm_* properties) changed; `changes` holds the new values. */
export type RealmPropertiesChanged = Event<'RealmPropertiesChanged', { realm_id: number; changes: Record<string, unknown> }>;

export type RealmEvent = RealmCreated | UserGroupCreated | RealmPropertiesChanged;
