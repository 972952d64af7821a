import type { ColumnType } from 'kysely';

/** Table of migration 0120: one row per (muter, muted user). */
export interface MutedUsersTable {
  user_id: number;
  muted_user_id: number;
  /** seconds since the epoch (bigint: read back as a string on some drivers) */
  date_muted: ColumnType<number, number, number>;
}

export interface MutedUsersTables {
  muted_users: MutedUsersTable;
}
