import type { Event } from '../event-types.js';

/**
 * A user changed their status. Only what the request named changes: a null field is unchanged.
 * `emoji_name` "" clears the emoji (code "" and type unicode_emoji). `away` is the deprecated
 * alias of presence_enabled (away = !presence_enabled); the setting itself changes through a
 * UserSettingsChanged appended with this event.
 */
export type UserStatusChanged = Event<'UserStatusChanged', {
  user_id: number;
  realm_id: number;
  away: boolean | null;
  status_text: string | null;
  emoji_name: string | null;
  emoji_code: string | null;
  reaction_type: string | null;
}>;

export type UserStatusEvent = UserStatusChanged;
