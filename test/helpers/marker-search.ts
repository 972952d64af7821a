import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/** Tables (of the public schema) in which `marker` appears anywhere in a row's text form. */
export async function tablesContaining(db: Db, marker: string): Promise<string[]> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`.execute(db);
  const found: string[] = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(name)} t WHERE strpos(t::text, ${marker}) > 0`.execute(db);
    if (Number(rows[0]!.n) > 0) found.push(name);
  }
  return found;
}
