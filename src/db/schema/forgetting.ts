import type { ColumnType } from 'kysely';

/** A data key wrapped by the key-encryption key (src/eventstore/crypto/key-store.ts). */
export interface DataKeysTable {
  key_id: string;
  scope: string;
  subject: string;
  format: number;
  wrapped: string;
  created_at: ColumnType<Date, never, never>;
}

export interface DataKeyCheckTable {
  id: number;
  format: number;
  check_value: string;
  created_at: ColumnType<Date, never, never>;
}

/** A deleted message whose content is shredded once the organization's grace period has passed. */
export interface PendingShredsTable {
  message_id: number;
  realm_id: number;
  /** the channel it was in when deleted; null for a direct message */
  stream_id: number | null;
  /** seconds since the epoch */
  deleted_at: number;
}

/** A channel or a person under legal hold: nothing of theirs is shredded while it lasts. */
export interface LegalHoldsTable {
  realm_id: number;
  scope: 'channel' | 'user';
  subject_id: number;
  reason: string | null;
  since: number;
}

export interface ForgettingTables {
  data_keys: DataKeysTable;
  data_key_check: DataKeyCheckTable;
  pending_shreds: PendingShredsTable;
  legal_holds: LegalHoldsTable;
}
