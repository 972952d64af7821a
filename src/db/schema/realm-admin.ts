import type { JSONColumnType } from 'kysely';

/** Tables of migration 0170: allowed email domains and default channel groups. */
export interface RealmDomainsTable {
  id: number;
  realm_id: number;
  domain: string;
  allow_subdomains: boolean;
}

export interface DefaultStreamGroupsTable {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  stream_ids: JSONColumnType<number[], string, string>;
}

export interface RealmAdminTables {
  realm_domains: RealmDomainsTable;
  default_stream_groups: DefaultStreamGroupsTable;
}
