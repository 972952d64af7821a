import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.js';
import { assertPathId, collect, rechunk, type ByteRange, type FileBytes, type FileStorage } from './file-storage.js';

export const CHUNK_SIZE = 256 * 1024;
/**
 * A save in progress is stored as a fifth path segment under its path id (followed by a random
 * uuid): every real path id has four (PATH_ID_FORM), so no real file is ever taken for one.
 */
export const STAGING_SEGMENT = '/staging-';

/**
 * Files in PostgreSQL (migration 0200), so every replica on the database sees every file with
 * nothing else to run. A file is split into rows of CHUNK_SIZE bytes: a save writes and a read
 * fetches one chunk at a time, so neither holds the whole file.
 *
 * A save writes its chunks under a staging name, one short statement per chunk, and only then
 * swaps them in under the real path in one short transaction: an upload arrives at the speed of
 * its client, and a transaction held open for it would hold a pooled connection (on PGlite, the
 * only one) for as long. A reader sees the old file or the whole new one.
 */
export class PostgresStorage implements FileStorage {
  constructor(private readonly db: Db) {}

  async save(pathId: string, data: FileBytes, contentType: string): Promise<void> {
    assertPathId(pathId);
    const staging = `${pathId}${STAGING_SEGMENT}${randomUUID()}`;
    await this.db.insertInto('stored_files').values({ path_id: staging, size: 0, content_type: contentType, chunk_size: CHUNK_SIZE }).execute();
    try {
      let index = 0;
      let size = 0;
      for await (const chunk of rechunk(data, CHUNK_SIZE)) {
        await this.db.insertInto('stored_file_chunks').values({ path_id: staging, chunk_index: index++, data: chunk }).execute();
        size += chunk.length;
      }
      await this.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('stored_files').where('path_id', '=', pathId).execute();
        await trx.insertInto('stored_files').values({ path_id: pathId, size, content_type: contentType, chunk_size: CHUNK_SIZE }).execute();
        await trx.updateTable('stored_file_chunks').set({ path_id: pathId }).where('path_id', '=', staging).execute();
        await trx.deleteFrom('stored_files').where('path_id', '=', staging).execute();
      });
    } finally {
      // Gone already after a save that completed; after a failed one, its chunks go with it (cascade).
      await this.db.deleteFrom('stored_files').where('path_id', '=', staging).execute();
    }
  }

  async read(pathId: string): Promise<Buffer | null> {
    const pieces = await this.stream(pathId);
    return pieces ? collect(pieces) : null;
  }

  async stream(pathId: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | null> {
    const file = await this.db.selectFrom('stored_files').select(['size', 'chunk_size']).where('path_id', '=', pathId).executeTakeFirst();
    if (!file) return null;
    const size = Number(file.size);
    const chunkSize = file.chunk_size;
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? size - 1, size - 1);
    const db = this.db;
    return (async function* () {
      if (end < start) return;
      for (let index = Math.floor(start / chunkSize); index <= Math.floor(end / chunkSize); index++) {
        const row = await db.selectFrom('stored_file_chunks').select('data').where('path_id', '=', pathId).where('chunk_index', '=', index).executeTakeFirst();
        // Removed while being read: stop short rather than serve a mix.
        if (!row) throw new Error(`stored file ${pathId} lost chunk ${index} while being read`);
        const base = index * chunkSize;
        const data = Buffer.from(row.data);
        yield data.subarray(Math.max(0, start - base), Math.min(data.length, end - base + 1));
      }
    })();
  }

  async stat(pathId: string): Promise<{ size: number } | null> {
    const file = await this.db.selectFrom('stored_files').select('size').where('path_id', '=', pathId).executeTakeFirst();
    return file ? { size: Number(file.size) } : null;
  }

  async remove(pathId: string): Promise<void> {
    // The chunks go with the row (ON DELETE CASCADE).
    await this.db.deleteFrom('stored_files').where('path_id', '=', pathId).execute();
  }

  async sweepAbandonedSaves(startedBefore: Date): Promise<number> {
    // A staging row's stored_at is when its save began; its chunks go with it (ON DELETE CASCADE).
    const result = await this.db
      .deleteFrom('stored_files')
      .where('path_id', 'like', `%/%/%/%${STAGING_SEGMENT}%`)
      .where('stored_at', '<', startedBefore)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
