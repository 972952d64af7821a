import { mkdir, readFile, rm, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

/**
 * Where uploaded files' bytes live. The log records that a file exists (AttachmentUploaded) and
 * that it is gone (AttachmentDeleted); the bytes are written before the first event is appended
 * and removed after the second one committed, so an event never names missing bytes.
 */
export interface FileStorage {
  save(pathId: string, data: Buffer, contentType: string): Promise<void>;
  /** The bytes, or null when there is no such file. */
  read(pathId: string): Promise<Buffer | null>;
  /** Removes the file; removing a missing file is not an error. */
  remove(pathId: string): Promise<void>;
}

/** `<realm_id>/<2 hex>/<24 random>/<file name>`, the shape of every path id this server makes. */
export const PATH_ID_FORM = /^\d+\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/[^/\\\u0000]+$/;

/** Files under one directory (default `${DATA_DIR}/uploads`), one file per path id. */
export class LocalDiskStorage implements FileStorage {
  constructor(readonly root: string) {}

  private fileOf(pathId: string): string {
    if (!PATH_ID_FORM.test(pathId) || pathId.split('/').some((part) => part === '.' || part === '..')) {
      throw new Error(`invalid path id: ${pathId}`);
    }
    const file = path.resolve(this.root, pathId);
    if (!file.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`invalid path id: ${pathId}`);
    return file;
  }

  async save(pathId: string, data: Buffer): Promise<void> {
    const file = this.fileOf(pathId);
    await mkdir(path.dirname(file), { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temp = `${file}.${randomUUID()}.part`;
    await writeFile(temp, data);
    await rename(temp, file);
  }

  async read(pathId: string): Promise<Buffer | null> {
    try {
      return await readFile(this.fileOf(pathId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
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

export interface UploadSettings {
  /** Largest accepted file, in MiB. */
  maxFileSizeMib: number;
  /** Files never used in a message are deleted this long after upload. */
  unusedRetentionMs: number;
}

/** UPLOAD_MAX_FILE_SIZE_MIB (default 25) and UNUSED_UPLOAD_RETENTION_DAYS (default 21, i.e. three weeks). */
export function uploadSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): UploadSettings {
  const number = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
    return n;
  };
  return {
    maxFileSizeMib: number(env.UPLOAD_MAX_FILE_SIZE_MIB, 25, 'UPLOAD_MAX_FILE_SIZE_MIB'),
    unusedRetentionMs: number(env.UNUSED_UPLOAD_RETENTION_DAYS, 21, 'UNUSED_UPLOAD_RETENTION_DAYS') * 24 * 3600 * 1000,
  };
}

const storages = new Map<string, FileStorage>();

/** The storage for a data directory (one instance per directory). */
export function storageFor(dataDir: string): FileStorage {
  const root = path.join(dataDir, 'uploads');
  let storage = storages.get(root);
  if (!storage) {
    storage = new LocalDiskStorage(root);
    storages.set(root, storage);
  }
  return storage;
}
