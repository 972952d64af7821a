import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { SignedRange } from './log-signing.js';

const PAGE = 5_000;

/** The signature file beside an export: one signed range per line, read back by import. */
export const signatureFileOf = (exportFile: string) => `${exportFile}.signatures`;

/** Every signed range of `db`, in position order. */
export async function* signedRanges(db: Db): AsyncGenerator<SignedRange[]> {
  let after = 0;
  for (;;) {
    const rows = await db.selectFrom('log_signatures')
      .select(['position', 'from_position', 'hash', 'log_id', 'key_id', 'signature', 'signed_at'])
      .where('position', '>', after).orderBy('position').limit(PAGE).execute();
    if (rows.length === 0) return;
    yield rows.map((row) => ({ ...row, signed_at: row.signed_at.toISOString() }));
    after = rows[rows.length - 1]!.position;
  }
}

export async function insertSignedRanges(db: Db, rows: readonly SignedRange[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('log_signatures').values(rows.map((row) => ({ ...row }))).execute();
}

/** Copies the signatures of `source` up to `until` into `target` (replay). */
export async function copySignatures(source: Db, target: Db, until: number): Promise<number> {
  // A source from before migration 0160 has no signatures.
  const { rows } = await sql<{ t: string | null }>`SELECT to_regclass('log_signatures')::text AS t`.execute(source);
  if (!rows[0]?.t) return 0;
  let count = 0;
  for await (const page of signedRanges(source)) {
    const kept = page.filter((row) => row.position <= until);
    await insertSignedRanges(target, kept);
    count += kept.length;
    if (kept.length < page.length) break;
  }
  return count;
}

export async function writeSignatureFile(db: Db, file: string): Promise<number> {
  const sink = createWriteStream(file);
  let count = 0;
  for await (const page of signedRanges(db)) {
    for (const row of page) {
      if (!sink.write(`${JSON.stringify(row)}\n`)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
    }
    count += page.length;
  }
  sink.end();
  await finished(sink);
  return count;
}

const FIELDS = { position: 'number', from_position: 'number', hash: 'string', log_id: 'string', key_id: 'string', signature: 'string', signed_at: 'string' } as const;

export async function readSignatureFile(db: Db, file: string): Promise<number> {
  let batch: SignedRange[] = [];
  let count = 0;
  let lineNumber = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    lineNumber += 1;
    if (!line.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`line ${lineNumber} of ${file} is not JSON`);
    }
    for (const [field, type] of Object.entries(FIELDS)) {
      if (typeof row[field] !== type) throw new Error(`line ${lineNumber} of ${file} has no ${field}`);
    }
    batch.push(row as unknown as SignedRange);
    if (batch.length >= 1_000) {
      await insertSignedRanges(db, batch);
      count += batch.length;
      batch = [];
    }
  }
  await insertSignedRanges(db, batch);
  return count + batch.length;
}

/** The first signature whose hash is not the log's at its position (import without the public key checks this much). */
export async function signedHeadsMismatch(db: Db): Promise<number | undefined> {
  const { rows } = await sql<{ position: number }>`SELECT s.position FROM log_signatures s LEFT JOIN events e ON e.position = s.position
    WHERE e.hash IS DISTINCT FROM s.hash ORDER BY s.position LIMIT 1`.execute(db);
  return rows[0] ? Number(rows[0].position) : undefined;
}
