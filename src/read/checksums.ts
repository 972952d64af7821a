import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface TableChecksum {
  table: string;
  rows: number;
  md5: string;
}

/** An order-independent fingerprint of each table's rows: equal checksums mean equal contents. */
export async function tableChecksums(db: Db, tables: readonly string[]): Promise<TableChecksum[]> {
  const out: TableChecksum[] = [];
  for (const table of [...tables].sort()) {
    const { rows } = await sql<{ rows: number; md5: string | null }>`
      SELECT count(*)::int8 AS rows,
             md5(coalesce(string_agg(h, '' ORDER BY h), '')) AS md5
      FROM (SELECT md5(t::text) AS h FROM ${sql.table(table)} t) x`.execute(db);
    out.push({ table, rows: Number(rows[0]!.rows), md5: rows[0]!.md5 ?? '' });
  }
  return out;
}
