import type { Db } from '../db/database.js';
import { Role } from '../domain/roles.js';

/** The real server's RealmExport object (GET /export/realm, the `realm_export` event). */
export interface RealmExportObject {
  id: number;
  export_time: number;
  acting_user_id: number;
  export_url: string | null;
  deleted_timestamp: number | null;
  failed_timestamp: number | null;
  pending: boolean;
}

/** The files of one export in storage: the log, then its data keys and signed ranges (as `cli export` writes them). */
export const EXPORT_FILE_SUFFIXES = ['', '.keys', '.signatures'] as const;

export async function getRealmExport(db: Db, realmId: number, exportId: number) {
  return db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realmId).where('id', '=', exportId).executeTakeFirst();
}

export async function pendingRealmExportIds(db: Db): Promise<number[]> {
  const rows = await db.selectFrom('realm_exports').select('id').where('path_id', 'is', null).where('failed_timestamp', 'is', null).orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** How many exports the organization requested since `since` (UNIX seconds), for the rate limit. */
export async function realmExportsSince(db: Db, realmId: number, since: number): Promise<number> {
  const row = await db.selectFrom('realm_exports').select((eb) => eb.fn.countAll<number>().as('n')).where('realm_id', '=', realmId).where('export_time', '>=', since).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Every export of the organization, oldest first, as the real server lists them. */
export async function listRealmExports(db: Db, realmId: number, realmUrl: string): Promise<RealmExportObject[]> {
  const rows = await db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  return rows.map((r) => ({
    id: r.id,
    export_time: r.export_time,
    acting_user_id: r.acting_user_id,
    // Only a finished export that is not deleted has a file to download.
    export_url: r.path_id !== null && r.deleted_timestamp === null ? `${realmUrl}/user_uploads/${r.path_id}` : null,
    deleted_timestamp: r.deleted_timestamp,
    failed_timestamp: r.failed_timestamp,
    pending: r.path_id === null && r.failed_timestamp === null,
  }));
}

/** The organization's active human owners: the only users who see exports. */
export async function realmOwnerIds(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('role', '=', Role.OWNER).where('is_active', '=', true).where('is_bot', '=', false).execute();
  return rows.map((r) => r.id);
}

/**
 * The export file at `pathId` (the log or one of the files beside it) when `user` may download
 * it: an owner of its organization, and the export not deleted. Null otherwise.
 */
export async function exportFileFor(db: Db, user: { realm_id: number; role: number }, pathId: string): Promise<{ name: string; content_type: string } | null> {
  if (user.role !== Role.OWNER) return null;
  const suffix = EXPORT_FILE_SUFFIXES.find((s) => s !== '' && pathId.endsWith(s)) ?? '';
  const logPath = pathId.slice(0, pathId.length - suffix.length);
  const row = await db.selectFrom('realm_exports').select(['id', 'deleted_timestamp']).where('realm_id', '=', user.realm_id).where('path_id', '=', logPath).executeTakeFirst();
  if (!row || row.deleted_timestamp !== null) return null;
  return { name: pathId.slice(pathId.lastIndexOf('/') + 1), content_type: 'application/octet-stream' };
}
