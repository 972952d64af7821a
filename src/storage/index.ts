import path from 'node:path';
import type { Config, FileStorageKind } from '../config.js';
import type { Db } from '../db/database.js';
import type { FileStorage } from './file-storage.js';
import { LocalDiskStorage } from './local-disk.js';
import { PostgresStorage } from './postgres-storage.js';
import { S3Storage } from './s3-storage.js';

export { PATH_ID_FORM, type ByteRange, type FileBytes, type FileStorage } from './file-storage.js';
export { LocalDiskStorage } from './local-disk.js';
export { PostgresStorage } from './postgres-storage.js';
export { S3Storage } from './s3-storage.js';

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

/** FILE_STORAGE when set; otherwise PostgreSQL when there is one to share, else the local disk. */
export function fileStorageKind(config: Pick<Config, 'fileStorage' | 'databaseUrl'>): FileStorageKind {
  return config.fileStorage ?? (config.databaseUrl ? 'postgres' : 'local');
}

/** A store of the given kind (what `migrate-files` opens for its source and target). */
export function openStorage(kind: FileStorageKind, config: Pick<Config, 'dataDir' | 's3'>, db: Db): FileStorage {
  switch (kind) {
    case 'local':
      return new LocalDiskStorage(path.join(config.dataDir, 'uploads'));
    case 'postgres':
      return new PostgresStorage(db);
    case 's3':
      if (!config.s3) throw new Error('the S3 store needs S3_BUCKET');
      return new S3Storage(config.s3);
    default: {
      const never: never = kind;
      throw new Error(`unknown file storage ${String(never)}`);
    }
  }
}

const storages = new WeakMap<Db, FileStorage>();

/** This server's store of file bytes (one instance per database handle). */
export function storageFor(ctx: { config: Config; db: Db }): FileStorage {
  let storage = storages.get(ctx.db);
  if (!storage) {
    storage = openStorage(fileStorageKind(ctx.config), ctx.config, ctx.db);
    storages.set(ctx.db, storage);
  }
  return storage;
}
