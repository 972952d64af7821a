import type { Event } from '../event-types.js';

/**
 * One organization setting changed by an administrator (PATCH /realm), as the real server's
 * do_set_realm_property records one property at a time: clients get one event per property.
 * `name` is the organization's name; every other property is a realm_* setting.
 */
export type RealmSettingChanged = Event<'RealmSettingChanged', { realm_id: number; property: string; value: unknown }>;

/** An email domain new users may sign up with (realm_domains). */
export type RealmDomainAdded = Event<'RealmDomainAdded', { realm_id: number; domain_id: number; domain: string; allow_subdomains: boolean }>;
export type RealmDomainChanged = Event<'RealmDomainChanged', { realm_id: number; domain: string; allow_subdomains: boolean }>;
export type RealmDomainRemoved = Event<'RealmDomainRemoved', { realm_id: number; domain: string }>;

/**
 * The organization's icon, logo or night logo changed: `source` is 'U' (uploaded) or the
 * default ('G' for the icon, 'D' for logos); `version` makes each upload's URL new.
 */
export type RealmImageChanged = Event<'RealmImageChanged', {
  realm_id: number;
  image: 'icon' | 'logo' | 'night_logo';
  source: string;
  version: number;
}>;

/** A named set of channels offered together to new users (default_stream_groups). */
export type DefaultStreamGroupCreated = Event<'DefaultStreamGroupCreated', {
  realm_id: number; group_id: number; name: string; description: string; stream_ids: number[];
}>;
export type DefaultStreamGroupChanged = Event<'DefaultStreamGroupChanged', {
  realm_id: number; group_id: number; name: string; description: string; stream_ids: number[];
}>;
export type DefaultStreamGroupRemoved = Event<'DefaultStreamGroupRemoved', { realm_id: number; group_id: number }>;

export type RealmAdminEvent =
  | RealmSettingChanged
  | RealmDomainAdded
  | RealmDomainChanged
  | RealmDomainRemoved
  | RealmImageChanged
  | DefaultStreamGroupCreated
  | DefaultStreamGroupChanged
  | DefaultStreamGroupRemoved;
