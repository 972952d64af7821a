import type { Event } from '../event-types.js';

/** A custom profile field as the custom_profile_fields client event lists it. */
export interface ProfileFieldEntry {
  id: number;
  type: number;
  order: number;
  name: string;
  hint: string;
  field_data: string;
  display_in_profile_summary: boolean;
  /** Absent on events before fields could be required: false. */
  required?: boolean;
}

/** `fields`: every field of the realm afterwards, by their new order (the client event carries them all). */
export type CustomProfileFieldsReordered = Event<'CustomProfileFieldsReordered', { realm_id: number; fields: ProfileFieldEntry[] }>;

/** An administrator edited a field (PATCH /realm/profile_fields/{id}): its values afterwards. */
export type CustomProfileFieldUpdated = Event<'CustomProfileFieldUpdated', {
  field_id: number;
  realm_id: number;
  name: string;
  hint: string;
  field_data: string;
  display_in_profile_summary: boolean;
  required?: boolean;
}>;

/** A field was deleted, and with it every user's value for it. */
export type CustomProfileFieldDeleted = Event<'CustomProfileFieldDeleted', { field_id: number; realm_id: number }>;

export type ProfileFieldEvent = CustomProfileFieldsReordered | CustomProfileFieldUpdated | CustomProfileFieldDeleted;
