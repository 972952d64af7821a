import { settingValue } from '../domain/settings/defaults.js';
import type { UserRow } from '../read/users.js';

/** A subscription's notification settings and the user's setting a null one stands for. */
const INHERITED_FROM = {
  desktop_notifications: 'enable_stream_desktop_notifications',
  audible_notifications: 'enable_stream_audible_notifications',
  push_notifications: 'enable_stream_push_notifications',
  email_notifications: 'enable_stream_email_notifications',
} as const;

/**
 * For a client without the `notification_settings_null` capability, the real server writes a subscription's
 * unset (null) desktop / audible / push / email notification setting in /register as the user's own default for
 * channel messages (handle_stream_notifications_compatibility); wildcard_mentions_notify stays null. Events
 * keep their nulls there too.
 */
export function withInheritedNotificationSettings(entries: Array<Record<string, unknown>>, user: UserRow): void {
  const stored = user.settings as Record<string, unknown>;
  for (const entry of entries) {
    for (const [property, setting] of Object.entries(INHERITED_FROM)) {
      if (entry[property] !== null) continue;
      entry[property] = settingValue(stored, setting);
    }
  }
}
