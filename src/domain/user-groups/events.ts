import type { Event } from '../event-types.js';
import type { UserGroupCreated } from '../realm/events.js';

// A group's creation is the realm area's UserGroupCreated (system groups are made with the realm).
export type UserGroupUpdated = Event<'UserGroupUpdated', {
  realm_id: number;
  group_id: number;
  /** Only the properties that changed. */
  changes: { name?: string; description?: string; can_mention_group?: number };
}>;
export type UserGroupMembersAdded = Event<'UserGroupMembersAdded', { realm_id: number; group_id: number; user_ids: number[] }>;
export type UserGroupMembersRemoved = Event<'UserGroupMembersRemoved', { realm_id: number; group_id: number; user_ids: number[] }>;
export type UserGroupSubgroupsAdded = Event<'UserGroupSubgroupsAdded', { realm_id: number; group_id: number; subgroup_ids: number[] }>;
export type UserGroupSubgroupsRemoved = Event<'UserGroupSubgroupsRemoved', { realm_id: number; group_id: number; subgroup_ids: number[] }>;
export type UserGroupDeleted = Event<'UserGroupDeleted', { realm_id: number; group_id: number }>;

export type UserGroupEvent =
  | UserGroupUpdated
  | UserGroupMembersAdded
  | UserGroupMembersRemoved
  | UserGroupSubgroupsAdded
  | UserGroupSubgroupsRemoved
  | UserGroupDeleted;

export type { UserGroupCreated };
