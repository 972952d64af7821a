import type { ColumnType } from 'kysely';

/** bigint columns come back as strings from pg; values are UNIX seconds. */
type Seconds = ColumnType<string | number, number, number>;
/** A text column with a default: may be left out of an insert. */
type Defaulted = ColumnType<string, string | undefined, string>;
type NullableSeconds = ColumnType<string | number | null, number | null, number | null>;

/** Migration 0100: each user's last pings, written in place (not a projection). */
export interface PresenceLastSeenTable {
  user_id: number;
  realm_id: number;
  last_active_time: NullableSeconds;
  last_connected_time: Seconds;
  /** the status of the last PresenceChanged logged for the user */
  logged_status: 'active' | 'idle';
}

/** Migration 0100: presence as the log knows it (projection of PresenceChanged and presence_enabled). */
export interface UserPresenceTable {
  user_id: number;
  realm_id: number;
  last_active_time: NullableSeconds;
  last_connected_time: Seconds;
}

/** Migration 0100: status text and emoji (projection of UserStatusChanged). */
export interface UserStatusTable {
  user_id: number;
  realm_id: number;
  status_text: Defaulted;
  emoji_name: Defaulted;
  emoji_code: Defaulted;
  reaction_type: Defaulted;
}

export interface PresenceTables {
  presence_last_seen: PresenceLastSeenTable;
  user_presence: UserPresenceTable;
  user_status: UserStatusTable;
}
