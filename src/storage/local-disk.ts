import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, rename, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { assertPathId, type ByteRange, type FileBytes, type FileStorage } from './file-storage.js';

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** Files under one directory (default `${DATA_DIR}/uploads`), one file per path id. */
export class LocalDiskStorage implements FileStorage {
  constructor(readonly root: string) {}

  private fileOf(pathId: string): string {
    assertPathId(pathId);
    const file = path.resolve(this.root, pathId);
    if (!file.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`invalid path id: ${pathId}`);
    return file;
  }

  async save(pathId: string, data: FileBytes): Promise<void> {
    const file = this.fileOf(pathId);
    await mkdir(path.dirname(file), { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temp = `${file}.${randomUUID()}.part`;
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
}
