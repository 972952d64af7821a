import type { Db } from '../db/database.js';
import type { LinkifierRow } from '../domain/linkifiers/decider.js';

/** A realm's linkifiers in the order clients (and message rendering) must apply them. */
export async function listLinkifierRows(db: Db, realmId: number): Promise<LinkifierRow[]> {
  return db
    .selectFrom('linkifiers')
    .select(['id', 'pattern', 'url_template', 'order'])
    .where('realm_id', '=', realmId)
    .orderBy('order')
    .orderBy('id')
    .execute();
}

/** The API form: `{id, pattern, url_template}`, ordered. */
export async function listLinkifiers(db: Db, realmId: number): Promise<Array<{ id: number; pattern: string; url_template: string }>> {
  const rows = await listLinkifierRows(db, realmId);
  return rows.map(({ id, pattern, url_template }) => ({ id, pattern, url_template }));
}
