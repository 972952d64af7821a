import type { Db } from '../db/database.js';
import type { PlaygroundRow } from '../domain/playgrounds/decider.js';

export async function listPlaygroundRows(db: Db, realmId: number): Promise<PlaygroundRow[]> {
  return db.selectFrom('playgrounds').select(['id', 'name', 'pygments_language', 'url_template']).where('realm_id', '=', realmId).orderBy('id').execute();
}

/**
 * The client form. The real server names the language `pygments_language`; our SPEC calls it
 * `highlighter_language`: both are sent so either kind of client finds it.
 */
export function formatPlayground(p: PlaygroundRow): Record<string, unknown> {
  return { id: p.id, name: p.name, pygments_language: p.pygments_language, highlighter_language: p.pygments_language, url_template: p.url_template };
}

export async function listPlaygrounds(db: Db, realmId: number): Promise<Array<Record<string, unknown>>> {
  return (await listPlaygroundRows(db, realmId)).map(formatPlayground);
}
