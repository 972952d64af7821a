import type { Db } from '../db/database.js';
import type { UserRow } from './users.js';

const USER_TABLES = ['users'];
const MAX_CACHED_USERS = 50_000;

interface Cache {
  version: number;
  rows: Map<number, UserRow>;
}

// Per database (a process may serve several, e.g. in tests).
const caches = new WeakMap<Db, Cache>();

/**
 * User rows by id, shared by a process's requests while the users read table has not changed
 * (ProjectionRunner.tablesVersion): the senders of a history window are mostly the same few people.
 */
export async function cachedUserRows(db: Db, tablesVersion: (tables: readonly string[]) => number, ids: readonly number[]): Promise<UserRow[]> {
  const version = tablesVersion(USER_TABLES);
  let cache = caches.get(db);
  if (!cache || cache.version !== version || cache.rows.size >= MAX_CACHED_USERS) caches.set(db, (cache = { version, rows: new Map() }));
  const found: UserRow[] = [];
  const missing: number[] = [];
  for (const id of ids) {
    const row = cache.rows.get(id);
    if (row) found.push(row);
    else missing.push(id);
  }
  if (missing.length === 0) return found;
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', missing).execute();
  // Kept only if the table did not change while they were read.
  const keep = tablesVersion(USER_TABLES) === version && caches.get(db) === cache;
  for (const row of rows) {
    const frozen = Object.freeze(row);
    if (keep) cache.rows.set(row.id, frozen);
    found.push(frozen);
  }
  return found;
}
