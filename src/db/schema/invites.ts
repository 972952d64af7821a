import type { ColumnType, JSONColumnType } from 'kysely';

/** Table of migration 0121: email invitations. Times in seconds (bigint). */
export interface InvitesTable {
  id: number;
  realm_id: number;
  email: string;
  invited_by_user_id: number;
  invited_as: number;
  stream_ids: JSONColumnType<number[], string, string>;
  invited: ColumnType<number, number, number>;
  expiry_date: ColumnType<number | null, number | null, number | null>;
  key_hash: string;
  /** the account the invitation created; null while pending */
  accepted_user_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Table of migration 0176: reusable invitation links. */
export interface MultiuseInvitesTable {
  id: number;
  realm_id: number;
  invited_by_user_id: number;
  invited_as: number;
  stream_ids: JSONColumnType<number[], string, string>;
  invited: ColumnType<number, number, number>;
  expiry_date: ColumnType<number | null, number | null, number | null>;
  key: string;
  revoked: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface InvitesTables {
  invites: InvitesTable;
  multiuse_invites: MultiuseInvitesTable;
}
