import type { Event } from '../event-types.js';

/** An administrator changed the organization's defaults for new users; `changes` holds only changed keys. */
export type RealmUserSettingsDefaultsChanged = Event<'RealmUserSettingsDefaultsChanged', {
  realm_id: number;
  changes: Record<string, unknown>;
}>;

/**
 * A user asked to move their account to a new address. Only the key's SHA-256 is recorded (the key
 * itself travels in the mail); the request's stream is named after that hash, so a confirmation
 * finds it without a read table.
 */
export type EmailChangeRequested = Event<'EmailChangeRequested', {
  user_id: number;
  realm_id: number;
  old_email: string;
  new_email: string;
  key_hash: string;
  /** ISO 8601; the link stops working afterwards. */
  expires_at: string;
}>;
/** The link was followed; the change itself is the users area's UserEmailChanged. */
export type EmailChangeConfirmed = Event<'EmailChangeConfirmed', { user_id: number; key_hash: string }>;

export type SettingsEvent = RealmUserSettingsDefaultsChanged | EmailChangeRequested | EmailChangeConfirmed;
