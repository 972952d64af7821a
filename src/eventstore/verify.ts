import type { KeyObject } from 'node:crypto';
import type { Db } from '../db/database.js';
import { chainHash, GENESIS_HASH } from './hash.js';
import { EVENT_COLUMNS } from './types.js';
import { RECORDED_AT_TEXT } from './recorded-at.js';
import { keyIdOf, rangeSignatureValid, type SignedRange } from './log-signing.js';

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
  /** With public keys: signatures that verified, the last signed position, events after it. */
  signatures?: { checked: number; lastSignedPosition: number; unsignedTail: number };
  /** With kept heads: how many were found in the chain. */
  keptHeadsFound?: number;
}

/** A head kept outside the database: `position hash`. */
export interface KeptHead {
  position: number;
  hash: string;
}

export interface VerifyOptions {
  expectedHead?: string;
  onProgress?: (checked: number) => void;
  /**
   * Check log_signatures with these keys: every signature must verify, sign the hash the chain
   * has at its position, and every event from the first signed range on must lie in a signed range,
   * except at most `tolerateUnsigned` at the end (the batches a running server has not signed yet).
   */
  publicKeys?: readonly KeyObject[];
  tolerateUnsigned?: number;
  /** Heads kept outside the database: each must be in the chain, with that hash at that position. */
  heads?: readonly KeptHead[];
}

const PAGE = 5_000;

/** Signatures in position order, a page at a time. */
async function* signaturesOf(db: Db): AsyncGenerator<SignedRange> {
  let after = 0;
  for (;;) {
    const rows = await db.selectFrom('log_signatures')
      .select(['position', 'from_position', 'hash', 'log_id', 'key_id', 'signature', 'signed_at'])
      .where('position', '>', after).orderBy('position').limit(PAGE).execute();
    for (const row of rows) yield { ...row, signed_at: row.signed_at.toISOString() };
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.position;
  }
}

/** `position hash` lines (blank lines and # comments skipped; verify prints `head: position hash`). */
export function parseKeptHeads(text: string): KeptHead[] {
  const heads: KeptHead[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').replace(/^\s*head:/, '').trim();
    if (!line) return;
    const match = /^(\d+)\s+([0-9a-f]{64})$/.exec(line);
    if (!match) throw new Error(`line ${i + 1} of the heads file is not "position hash": ${raw.slice(0, 120)}`);
    heads.push({ position: Number(match[1]), hash: match[2]! });
  });
  return heads;
}

/**
 * Walks the whole chain in position order, recomputing every hash from the stored row. A gap in
 * positions, an edited row or a rewritten hash breaks the chain at the first affected position.
 * With public keys it also checks the signed ranges (log-signing.ts); with kept heads, that each is in the chain.
 */
export async function verifyChain(db: Db, options: VerifyOptions = {}): Promise<VerifyReport> {
  let prevHash = GENESIS_HASH;
  let prevVersion = 1;
  let expectedPosition = 1;
  let checked = 0;
  let expectedHeadFound = options.expectedHead === undefined ? undefined : false;
  const keys = new Map((options.publicKeys ?? []).map((key) => [keyIdOf(key), key]));
  const signing = options.publicKeys !== undefined;
  const signatures = signing ? signaturesOf(db) : undefined;
  let signature = signatures ? (await signatures.next()).value ?? undefined : undefined;
  let firstSignedFrom: number | undefined = signature?.from_position;
  let signaturesChecked = 0;
  let lastSignedPosition = 0;
  const heads = [...(options.heads ?? [])].sort((a, b) => a.position - b.position);
  let nextHead = 0;
  let keptHeadsFound = 0;
  const fail = (position: number, reason: string): VerifyReport => ({
    ok: false, checked, headPosition: expectedPosition - 1, headHash: prevHash, firstBrokenPosition: position, reason, expectedHeadFound,
  });
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select([...EVENT_COLUMNS, 'hash_version', RECORDED_AT_TEXT.as('recorded_at')])
      .where('position', '>=', expectedPosition)
      .orderBy('position')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      if (row.position !== expectedPosition) return fail(expectedPosition, `position ${expectedPosition} is missing`);
      // A row of the old formula after one of the new would leave its recorded_at unprotected.
      if (row.hash_version < prevVersion) return fail(row.position, `hash version ${row.hash_version} after version ${prevVersion} at position ${row.position}`);
      let computed: string;
      try {
        computed = chainHash(prevHash, row);
      } catch (error) {
        return fail(row.position, `position ${row.position}: ${(error as Error).message}`);
      }
      if (computed !== row.hash) return fail(row.position, `hash mismatch at position ${row.position}`);
      if (row.hash === options.expectedHead) expectedHeadFound = true;
      while (nextHead < heads.length && heads[nextHead]!.position === row.position) {
        if (heads[nextHead]!.hash !== row.hash) {
          return fail(row.position, `the kept head at position ${row.position} is not in the chain (the log has ${row.hash} there)`);
        }
        keptHeadsFound += 1;
        nextHead += 1;
      }
      if (signatures) {
        // Every event from the first signed range on lies in one; before it, the chain binds the rows to that first signed hash.
        const inRange = signature !== undefined && signature.from_position <= row.position;
        if (!inRange && firstSignedFrom !== undefined && row.position >= firstSignedFrom && signature !== undefined) {
          return fail(row.position, `position ${row.position} is in no signed range: it was not appended by a server holding the key`);
        }
        if (signature && signature.position === row.position) {
          const key = keys.get(signature.key_id);
          if (!key) return fail(row.position, `the signature at position ${row.position} was made with key ${signature.key_id}, which is not among the given public keys`);
          if (!rangeSignatureValid(key, signature)) return fail(row.position, `the signature at position ${row.position} does not verify`);
          if (signature.hash !== row.hash) return fail(row.position, `the signed head at position ${row.position} does not match the chain`);
          signaturesChecked += 1;
          lastSignedPosition = row.position;
          const next: SignedRange | undefined = (await signatures.next()).value ?? undefined;
          if (next && next.from_position <= row.position) {
            return fail(next.position, `the signed range ${next.from_position}-${next.position} overlaps the one ending at ${row.position}`);
          }
          signature = next;
        }
      }
      prevHash = row.hash;
      prevVersion = row.hash_version;
      expectedPosition += 1;
      checked += 1;
    }
    options.onProgress?.(checked);
  }
  const headPosition = expectedPosition - 1;
  if (signature) {
    return fail(signature.position, `a signed head at position ${signature.position} is beyond the log's head ${headPosition} (truncated log)`);
  }
  if (nextHead < heads.length) {
    const missing = heads[nextHead]!;
    return fail(missing.position, `the kept head at position ${missing.position} is beyond the log's head ${headPosition} (truncated log)`);
  }
  const report: VerifyReport = { ok: true, checked, headPosition, headHash: prevHash, expectedHeadFound };
  if (options.heads) report.keptHeadsFound = keptHeadsFound;
  if (signing) {
    const unsignedTail = headPosition - lastSignedPosition;
    report.signatures = { checked: signaturesChecked, lastSignedPosition, unsignedTail };
    if (unsignedTail > (options.tolerateUnsigned ?? 0)) {
      return {
        ...report, ok: false, firstBrokenPosition: lastSignedPosition + 1,
        reason: `${unsignedTail} events after the last signed head (position ${lastSignedPosition}) are unsigned, from position ${lastSignedPosition + 1}: they were not appended by a server holding the key`,
      };
    }
  }
  if (options.expectedHead !== undefined && !expectedHeadFound && options.expectedHead !== GENESIS_HASH) {
    return { ...report, ok: false, reason: 'the expected head hash is not in the chain (truncated or rewritten log)' };
  }
  return report;
}
