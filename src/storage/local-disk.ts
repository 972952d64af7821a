import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, rename, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { assertPathId, type ByteRange, type FileBytes, type FileStorage } from './file-storage.js';

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Where saves write before their rename: a directory of its own under the root, so that no file a
 * save left there (the process died part way) can be taken for a real one; a path id starts with
 * its realm's number.
 */
const PARTIAL_DIR = '.partial';

/** Files under one directory (default `${DATA_DIR}/uploads`), one file per path id. */
export class LocalDiskStorage implements FileStorage {
  constructor(readonly root: string) {}

  private get partialDir(): string {
    return path.join(this.root, PARTIAL_DIR);
  }

  private fileOf(pathId: string): string {
    assertPathId(pathId);
    const file = path.resolve(this.root, pathId);
    if (!file.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`invalid path id: ${pathId}`);
    return file;
  }

  async save(pathId: string, data: FileBytes): Promise<void> {
    const file = this.fileOf(pathId);
    await mkdir(path.dirname(file), { recursive: true });
    await mkdir(this.partialDir, { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temp = path.join(this.partialDir, randomUUID());
    try {
      await pipeline(Buffer.isBuffer(data) ? Readable.from([data]) : Readable.from(data), createWriteStream(temp));
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async read(pathId: string): Promise<Buffer | null> {
    try {
      return await readFile(this.fileOf(pathId));
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  }

  async stream(pathId: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | null> {
    const file = this.fileOf(pathId);
    if (!(await this.stat(pathId))) return null;
    return createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async stat(pathId: string): Promise<{ size: number } | null> {
    try {
      return { size: (await stat(this.fileOf(pathId))).size };
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  }

  async remove(pathId: string): Promise<void> {
    const file = this.fileOf(pathId);
    await rm(file, { force: true });
    // Remove the now empty per-file directory too.
    await rm(path.dirname(file), { recursive: false, force: true }).catch(() => undefined);
  }

  async sweepAbandonedSaves(startedBefore: Date): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.partialDir);
    } catch (error) {
      if (missing(error)) return 0;
      throw error;
    }
    let swept = 0;
    for (const name of names) {
      const temp = path.join(this.partialDir, name);
      // Last written before the cut-off: a save still running writes to it all along.
      const info = await stat(temp).catch(() => undefined);
      if (!info || info.mtimeMs >= startedBefore.getTime()) continue;
      await rm(temp, { force: true });
      swept += 1;
    }
    return swept;
  }
}
