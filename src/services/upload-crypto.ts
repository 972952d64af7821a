import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DataKeyStore } from '../eventstore/crypto/key-store.js';
import type { KeyScope } from '../eventstore/crypto/personal-fields.js';
import { storageFor, type FileStorage } from '../storage/index.js';
import type { ServiceContext } from './context.js';

/**
 * Uploaded files' bytes at rest, each under a data key of its own (`upload:<path_id>` in
 * data_keys): destroying the key makes every copy of the file (the uploads directory, backups of
 * it) unreadable. Format: MAGIC ‖ 12-byte nonce ‖ 16-byte tag ‖ AES-256-GCM ciphertext, with
 * `upload:<path_id>` as associated data so the bytes of one file cannot be served as another's.
 * A file without the magic prefix was stored before this change and is served as it is.
 */
const MAGIC = Buffer.from('ZES-UPLOAD-1\n', 'utf8');

export const uploadKeyId = (pathId: string) => `upload:${pathId}`;
const uploadKey = (pathId: string): KeyScope => ({ keyId: uploadKeyId(pathId), scope: 'upload', subject: pathId });

export function isSealedUpload(bytes: Buffer): boolean {
  return bytes.length >= MAGIC.length + 28 && bytes.subarray(0, MAGIC.length).equals(MAGIC);
}

export class SealedUploadStorage implements FileStorage {
  constructor(
    readonly inner: FileStorage,
    private readonly keys: DataKeyStore,
  ) {}

  async save(pathId: string, data: Buffer, contentType: string): Promise<void> {
    await this.keys.ensure([uploadKey(pathId)]);
    const key = this.keys.cached(uploadKeyId(pathId));
    if (!key) throw new Error(`data key ${uploadKeyId(pathId)} is not available for sealing`);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(uploadKeyId(pathId), 'utf8'));
    const ct = Buffer.concat([cipher.update(data), cipher.final()]);
    await this.inner.save(pathId, Buffer.concat([MAGIC, iv, cipher.getAuthTag(), ct]), contentType);
  }

  /** The file's bytes; null when there is no such file or its key was destroyed. */
  async read(pathId: string): Promise<Buffer | null> {
    const bytes = await this.inner.read(pathId);
    if (!bytes || !isSealedUpload(bytes)) return bytes;
    const keyId = uploadKeyId(pathId);
    await this.keys.load([keyId]);
    const key = this.keys.cached(keyId);
    if (!key) return null;
    const at = MAGIC.length;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(at, at + 12));
      decipher.setAAD(Buffer.from(keyId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(at + 12, at + 28));
      return Buffer.concat([decipher.update(bytes.subarray(at + 28)), decipher.final()]);
    } catch {
      // Bytes that do not authenticate (tampered, or moved from another path) are served as no file.
      return null;
    }
  }

  /** Removes the bytes and destroys the key: a copy of the file anywhere else is unreadable too. */
  async remove(pathId: string): Promise<void> {
    await this.keys.destroy([uploadKeyId(pathId)]);
    await this.inner.remove(pathId);
  }
}

/** The uploads storage of this server: sealed when the log is (always, outside tests of plaintext logs). */
export function uploadStorage(ctx: Pick<ServiceContext, 'config' | 'store'>): FileStorage {
  const plain = storageFor(ctx.config.dataDir);
  return ctx.store.crypto ? new SealedUploadStorage(plain, ctx.store.crypto.keys) : plain;
}

/** After their keys were destroyed: the files' bytes go too (best effort; without the key they are noise anyway). */
export async function removeUploadBytes(ctx: Pick<ServiceContext, 'config'>, pathIds: readonly string[]): Promise<void> {
  const plain = storageFor(ctx.config.dataDir);
  for (const pathId of pathIds) await plain.remove(pathId).catch(() => undefined);
}
