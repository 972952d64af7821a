import type { Db } from '../db/database.js';
import { RECORDED_AT_TEXT } from './recorded-at.js';
import { EVENT_COLUMNS } from './types.js';
import { jsonText } from './json-text.js';

/** The log exactly as stored (sealed values as ciphertext), one event per line; returns how many. */
export async function writeExport(db: Db, sink: NodeJS.WritableStream): Promise<number> {
  let after = 0;
  let count = 0;
  for (;;) {
    const rows = await db
      .selectFrom('events')
      // recorded_at as its exact text: version 2 rows hash it (eventstore/recorded-at.ts).
      .select([...EVENT_COLUMNS, 'hash_version', RECORDED_AT_TEXT.as('recorded_at')])
      .where('position', '>', after)
      .orderBy('position')
      .limit(5_000)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      if (!sink.write(`${jsonText(row)}\n`)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
    }
    count += rows.length;
    after = rows[rows.length - 1]!.position;
  }
  return count;
}
