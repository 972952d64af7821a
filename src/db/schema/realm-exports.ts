/** Table of migration 0190: organization exports and their state. */
export interface RealmExportsTable {
  id: number;
  realm_id: number;
  acting_user_id: number;
  /** UNIX seconds (with fraction) of the request. */
  export_time: number;
  /** Storage path of the exported log, once written. */
  path_id: string | null;
  /** Bytes of the exported log. */
  size: number | null;
  failed_timestamp: number | null;
  deleted_timestamp: number | null;
}

export interface RealmExportsTables {
  realm_exports: RealmExportsTable;
}
