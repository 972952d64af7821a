import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { RealmsTable } from '../db/schema.js';

export type RealmRow = Selectable<RealmsTable>;

export async function getRealm(db: Db, realmId: number): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirst();
}

export async function getDefaultRealm(db: Db): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().orderBy('id').limit(1).executeTakeFirst();
}

export function realmHost(realm: RealmRow): string {
  return new URL(realm.url).host;
}

/** The domain of bot accounts' addresses (`name-bot@<domain>`): the organization's host without a port. */
export function botDomain(realm: RealmRow): string {
  return realmHost(realm).split(':')[0]!;
}
