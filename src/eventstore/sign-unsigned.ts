import type { Db } from '../db/database.js';
import { signRange, type SignedRange, type SigningKey } from './log-signing.js';
import { verifyChain } from './verify.js';

export interface UnsignedRange {
  from: number;
  to: number;
}

const PAGE = 5_000;

/**
 * Committed rows in no signed range: holes between signed ranges (a server killed between a commit and its
 * signature, then restarted) and, with `tail`, the rows after the last signed one (all rows when nothing is
 * signed). Rows before the first signed range stay as they are: the chain binds them to its hash.
 */
export async function findUnsignedRanges(db: Db, options: { tail: boolean }): Promise<UnsignedRange[]> {
  const ranges: UnsignedRange[] = [];
  let lastSigned: number | undefined;
  for (let after = 0; ;) {
    const rows = await db.selectFrom('log_signatures').select(['from_position', 'position']).where('position', '>', after).orderBy('position').limit(PAGE).execute();
    for (const row of rows) {
      if (lastSigned !== undefined && row.from_position > lastSigned + 1) ranges.push({ from: lastSigned + 1, to: row.from_position - 1 });
      lastSigned = row.position;
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.position;
  }
  if (options.tail) {
    const head = await db.selectFrom('events').select((eb) => eb.fn.max('position').as('head')).executeTakeFirst();
    const headPosition = Number(head?.head ?? 0);
    const from = (lastSigned ?? 0) + 1;
    if (headPosition >= from) ranges.push({ from, to: headPosition });
  }
  return ranges;
}

/**
 * Signs the unsigned ranges with `key`, after checking that the chain is intact (a signature vouches for every
 * row of its range: never for a broken chain). Idempotent: a second run finds nothing to sign.
 */
export async function signUnsignedRanges(db: Db, key: SigningKey, logId: string, options: { tail: boolean }): Promise<SignedRange[]> {
  const chain = await verifyChain(db);
  if (!chain.ok) throw new Error(`the chain does not verify (${chain.reason}); nothing was signed`);
  const signed: SignedRange[] = [];
  for (const range of await findUnsignedRanges(db, options)) {
    const end = await db.selectFrom('events').select('hash').where('position', '=', range.to).executeTakeFirstOrThrow();
    const row = { from_position: range.from, position: range.to, hash: end.hash, log_id: logId, key_id: key.keyId };
    const signature = { ...row, signature: signRange(key, row), signed_at: new Date().toISOString() };
    // A range signed meanwhile by another run keeps its signature.
    const inserted = await db.insertInto('log_signatures').values(signature).onConflict((oc) => oc.column('position').doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) signed.push(signature);
  }
  return signed;
}
