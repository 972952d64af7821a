import { createHash } from 'node:crypto';
import type { Db } from '../db/database.js';
import type { FileStorage } from '../storage/index.js';
import { referencedFiles } from './referenced-files.js';

export interface FileMigrationReport {
  /** Copied to the target and read back with the same hash. */
  copied: number;
  /** Already in the target with the same hash (a run before this one copied it). */
  present: number;
  /** Named by the read tables but in neither store. */
  missing: string[];
  /** Read back from the target with another hash than the source's. */
  mismatched: string[];
  bytes: number;
}

/** SHA-256 of a stream of bytes, and how many there were. */
async function digestOf(pieces: AsyncIterable<Uint8Array>): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const piece of pieces) {
    hash.update(piece);
    size += piece.byteLength;
  }
  return { sha256: hash.digest('hex'), size };
}

async function digestIn(storage: FileStorage, pathId: string): Promise<{ sha256: string; size: number } | null> {
  const pieces = await storage.stream(pathId);
  return pieces ? digestOf(pieces) : null;
}

/**
 * Copies every file the read tables name from one store to another, as stored (sealed files stay
 * sealed: their keys are named by path id, so they open the same in the new store), and checks
 * each by the SHA-256 of the bytes read back from the target. A file the target already holds
 * with the source's hash is left alone, so a run can be repeated or resumed after a failure.
 */
export async function migrateFiles(
  db: Db,
  source: FileStorage,
  target: FileStorage,
  progress: (line: string) => void = () => undefined,
): Promise<FileMigrationReport> {
  const report: FileMigrationReport = { copied: 0, present: 0, missing: [], mismatched: [], bytes: 0 };
  for await (const file of referencedFiles(db)) {
    const wanted = await digestIn(source, file.pathId);
    const there = await digestIn(target, file.pathId);
    if (!wanted) {
      if (there) report.present += 1;
      else if (!file.optional) {
        report.missing.push(file.pathId);
        progress(`missing: ${file.pathId}`);
      }
      continue;
    }
    if (there && there.sha256 === wanted.sha256) {
      report.present += 1;
      continue;
    }
    const pieces = await source.stream(file.pathId);
    if (!pieces) {
      report.missing.push(file.pathId);
      continue;
    }
    await target.save(file.pathId, pieces, file.contentType);
    const copied = await digestIn(target, file.pathId);
    if (copied?.sha256 !== wanted.sha256) {
      report.mismatched.push(file.pathId);
      progress(`hash mismatch: ${file.pathId}`);
      continue;
    }
    report.copied += 1;
    report.bytes += wanted.size;
  }
  return report;
}
