import type { Db } from '../db/database.js';
import { chainHash, GENESIS_HASH } from './hash.js';
import { EVENT_COLUMNS } from './types.js';

export interface VerifyReport {
  ok: boolean;
  checked: number;
  headPosition: number;
  headHash: string;
  /** First position whose stored hash, or whose link to the previous position, is wrong. */
  firstBrokenPosition?: number;
  reason?: string;
  /** Set when an expected head (exported earlier) was given. */
  expectedHeadFound?: boolean;
}

/**
 * Walks the whole chain in position order, recomputing every hash from the stored row. A gap in
 * positions, an edited row or a rewritten hash breaks the chain at the first affected position.
 */
export async function verifyChain(
  db: Db,
  options: { expectedHead?: string; onProgress?: (checked: number) => void } = {},
): Promise<VerifyReport> {
  let prevHash = GENESIS_HASH;
  let expectedPosition = 1;
  let checked = 0;
  let expectedHeadFound = options.expectedHead === undefined ? undefined : false;
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select([...EVENT_COLUMNS])
      .where('position', '>=', expectedPosition)
      .orderBy('position')
      .limit(5_000)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const broken = (reason: string): VerifyReport => ({
        ok: false,
        checked,
        headPosition: row.position,
        headHash: row.hash,
        firstBrokenPosition: row.position === expectedPosition ? row.position : expectedPosition,
        reason,
        expectedHeadFound,
      });
      if (row.position !== expectedPosition) return broken(`position ${expectedPosition} is missing`);
      const computed = chainHash(prevHash, row);
      if (computed !== row.hash) return broken(`hash mismatch at position ${row.position}`);
      if (row.hash === options.expectedHead) expectedHeadFound = true;
      prevHash = row.hash;
      expectedPosition += 1;
      checked += 1;
    }
    options.onProgress?.(checked);
  }
  const report: VerifyReport = { ok: true, checked, headPosition: expectedPosition - 1, headHash: prevHash, expectedHeadFound };
  if (options.expectedHead !== undefined && !expectedHeadFound && options.expectedHead !== GENESIS_HASH) {
    return { ...report, ok: false, reason: 'the expected head hash is not in the chain (truncated or rewritten log)' };
  }
  return report;
}
