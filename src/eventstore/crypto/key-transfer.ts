import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

export interface WrappedKeyRow {
  key_id: string;
  scope: string;
  subject: string;
  format: number;
  wrapped: string;
}

const PAGE = 5_000;

/** Every data key that still exists, in key order (wrapped: the KEK never leaves the server). */
export async function* wrappedKeys(db: Db): AsyncGenerator<WrappedKeyRow[]> {
  let after = '';
  for (;;) {
    const { rows } = await sql<WrappedKeyRow>`SELECT key_id, scope, subject, format, wrapped FROM data_keys
      WHERE key_id > ${after} ORDER BY key_id LIMIT ${PAGE}`.execute(db);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.key_id;
  }
}

export async function insertWrappedKeys(db: Db, rows: readonly WrappedKeyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO data_keys (key_id, scope, subject, format, wrapped)
    VALUES ${sql.join(rows.map((r) => sql`(${r.key_id}, ${r.scope}, ${r.subject}, ${r.format}, ${r.wrapped})`))}
    ON CONFLICT (key_id) DO NOTHING`.execute(db);
}

/** Copies the keys of `source` into `target` (replay builds another database from the same log). */
export async function copyDataKeys(source: Db, target: Db): Promise<number> {
  // A log from before encryption has no key table: nothing to copy.
  const { rows } = await sql<{ t: string | null }>`SELECT to_regclass('data_keys')::text AS t`.execute(source);
  if (!rows[0]?.t) return 0;
  let count = 0;
  for await (const page of wrappedKeys(source)) {
    await insertWrappedKeys(target, page);
    count += page.length;
  }
  return count;
}

/** The key file beside an export: one wrapped key per line. Without it an import reads every sealed value as shredded. */
export const keyFileOf = (exportFile: string) => `${exportFile}.keys`;

export async function writeKeyFile(db: Db, file: string): Promise<number> {
  const sink = createWriteStream(file, { mode: 0o600 });
  let count = 0;
  for await (const page of wrappedKeys(db)) {
    for (const row of page) {
      if (!sink.write(`${JSON.stringify(row)}\n`)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
    }
    count += page.length;
  }
  sink.end();
  await finished(sink);
  return count;
}

export async function readKeyFile(db: Db, file: string): Promise<number> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let batch: WrappedKeyRow[] = [];
  let count = 0;
  for await (const line of lines) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as WrappedKeyRow;
    if (typeof row.key_id !== 'string' || typeof row.wrapped !== 'string' || !Number.isInteger(row.format)) throw new Error(`${file}: not a key file line: ${line.slice(0, 80)}`);
    batch.push(row);
    if (batch.length >= 1_000) {
      await insertWrappedKeys(db, batch);
      count += batch.length;
      batch = [];
    }
  }
  await insertWrappedKeys(db, batch);
  return count + batch.length;
}
