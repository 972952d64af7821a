import { createDecipheriv } from 'node:crypto';
import type { DataKeyStore } from '../eventstore/crypto/key-store.js';
import { legacyUploadKeyId, uploadKey, uploadKeyId } from '../eventstore/crypto/personal-fields.js';
import { storageFor, type ByteRange, type FileBytes, type FileStorage } from '../storage/index.js';
import { collect } from '../storage/file-storage.js';
import { chunkedLayout, isChunkedHeader, openChunks, sealChunks, SealedChunkError, storedRangeOf, CHUNKED_HEADER_SIZE, type ChunkedLayout } from './sealed-chunks.js';
import type { ServiceContext } from './context.js';

/**
 * Uploaded files' bytes at rest, each under a data key of its own (uploadKeyId: `upload:` and a
 * digest of the path, in data_keys): destroying the key makes every copy of the file (the uploads
 * directory, a bucket's versions, backups) unreadable.
 *
 * New files are sealed in chunks (format 3, sealed-chunks.ts), so they are written from a stream
 * and read back, whole or one range, without holding the file. Files of the earlier formats stay
 * readable as they are stored: format 1 and 2 are one AES-256-GCM message (MAGIC ‖ 12-byte nonce
 * ‖ 16-byte tag ‖ ciphertext, the key id as associated data), whose one tag covers the whole file,
 * so they are decrypted whole before any byte is served (they are at most UPLOAD_MAX_FILE_SIZE_MIB);
 * a file without a magic prefix was stored before sealing and is served as it is.
 */
const MAGIC_LEGACY = Buffer.from('ZES-UPLOAD-1\n', 'utf8');
/** Format 2: format 1 under (and bound to) the key named after the path's digest (uploadKeyId). */
const MAGIC_WHOLE = Buffer.from('ZES-UPLOAD-2\n', 'utf8');
const WHOLE_ENVELOPE = MAGIC_WHOLE.length + 28;
const HEAD = Math.max(CHUNKED_HEADER_SIZE, MAGIC_WHOLE.length);

export { uploadKeyId };

const startsWith = (bytes: Buffer, magic: Buffer, least: number) => bytes.length >= least && bytes.subarray(0, magic.length).equals(magic);

export function isSealedUpload(bytes: Buffer): boolean {
  return startsWith(bytes, MAGIC_WHOLE, WHOLE_ENVELOPE) || startsWith(bytes, MAGIC_LEGACY, WHOLE_ENVELOPE) || chunkedLayout(bytes, bytes.length) !== null;
}

/** Both names an upload's key may have (format 1, or 2 and 3): destroying a file destroys whichever exists. */
export const uploadKeyIdsOf = (pathId: string) => [uploadKeyId(pathId), legacyUploadKeyId(pathId)];

/** How a stored file is to be read, from its first bytes and its stored size. */
type Stored =
  | { format: 'chunked'; layout: ChunkedLayout }
  | { format: 'whole'; keyId: string; size: number }
  | { format: 'plain'; size: number };

const sizeOf = (stored: Stored) => (stored.format === 'chunked' ? stored.layout.size : stored.size);

export class SealedUploadStorage implements FileStorage {
  constructor(
    readonly inner: FileStorage,
    private readonly keys: DataKeyStore,
  ) {}

  /** Seals chunk by chunk as `data` arrives: the store gets the sealed stream, never the whole file. */
  async save(pathId: string, data: FileBytes, contentType: string): Promise<void> {
    await this.keys.ensure([uploadKey(pathId)]);
    const key = this.keys.cached(uploadKeyId(pathId));
    if (!key) throw new Error(`data key ${uploadKeyId(pathId)} is not available for sealing`);
    await this.inner.save(pathId, sealChunks(key, uploadKeyId(pathId), data), contentType);
  }

  private async inspect(pathId: string): Promise<Stored | null> {
    const stored = await this.inner.stat(pathId);
    if (!stored) return null;
    const pieces = stored.size === 0 ? null : await this.inner.stream(pathId, { start: 0, end: Math.min(HEAD, stored.size) - 1 });
    const head = pieces ? await collect(pieces) : Buffer.alloc(0);
    if (isChunkedHeader(head)) {
      const layout = chunkedLayout(head, stored.size);
      // A chunked header on bytes of no chunked shape: cut or padded, so not ours to serve.
      return layout ? { format: 'chunked', layout } : null;
    }
    if (startsWith(head, MAGIC_WHOLE, MAGIC_WHOLE.length) && stored.size >= WHOLE_ENVELOPE) {
      return { format: 'whole', keyId: uploadKeyId(pathId), size: stored.size - WHOLE_ENVELOPE };
    }
    if (startsWith(head, MAGIC_LEGACY, MAGIC_LEGACY.length) && stored.size >= WHOLE_ENVELOPE) {
      return { format: 'whole', keyId: legacyUploadKeyId(pathId), size: stored.size - WHOLE_ENVELOPE };
    }
    return { format: 'plain', size: stored.size };
  }

  private async keyOf(keyId: string): Promise<Buffer | null> {
    await this.keys.load([keyId]);
    return this.keys.cached(keyId) ?? null;
  }

  /** A format 1 or 2 file, decrypted whole; null when it does not authenticate or its key is gone. */
  private async openWhole(pathId: string, keyId: string): Promise<Buffer | null> {
    const key = await this.keyOf(keyId);
    const bytes = key ? await this.inner.read(pathId) : null;
    if (!key || !bytes || bytes.length < WHOLE_ENVELOPE) return null;
    const at = MAGIC_WHOLE.length;
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

  /** The file's bytes; null when there is no such file, its key was destroyed or it does not authenticate. */
  async read(pathId: string): Promise<Buffer | null> {
    const pieces = await this.stream(pathId);
    if (!pieces) return null;
    try {
      return await collect(pieces);
    } catch (error) {
      if (error instanceof SealedChunkError) return null;
      throw error;
    }
  }

  /**
   * The plaintext (or one range of it) chunk by chunk. The first chunk is authenticated before
   * this returns, so a file that is tampered with from its start (or moved from another path, or
   * whose key is gone) is null; a later chunk that does not authenticate throws SealedChunkError
   * from the iteration, before any byte of it is released.
   */
  async stream(pathId: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | null> {
    const stored = await this.inspect(pathId);
    return stored ? this.streamOf(pathId, stored, range) : null;
  }

  /** The plaintext's size and a way to stream it, from one look at the stored file (a download's stat and stream). */
  async source(pathId: string): Promise<{ size: number; open(range?: ByteRange): Promise<AsyncIterable<Buffer> | null> } | null> {
    const stored = await this.inspect(pathId);
    if (!stored) return null;
    return { size: sizeOf(stored), open: (range) => this.streamOf(pathId, stored, range) };
  }

  private async streamOf(pathId: string, stored: Stored, range?: ByteRange): Promise<AsyncIterable<Buffer> | null> {
    switch (stored.format) {
      case 'plain':
        return this.inner.stream(pathId, range);
      case 'whole': {
        const bytes = await this.openWhole(pathId, stored.keyId);
        if (!bytes) return null;
        const part = range ? bytes.subarray(range.start, range.end + 1) : bytes;
        return (async function* () {
          yield part;
        })();
      }
      case 'chunked': {
        const { layout } = stored;
        const keyId = uploadKeyId(pathId);
        const key = await this.keyOf(keyId);
        if (!key) return null;
        // An empty file still has its one (empty, last) chunk to authenticate.
        const wanted = range ?? { start: 0, end: Math.max(layout.size - 1, 0) };
        const sealed = await this.inner.stream(pathId, storedRangeOf(layout, wanted).stored);
        if (!sealed) return null;
        const plain = openChunks(key, keyId, layout, wanted, sealed);
        let first: IteratorResult<Buffer>;
        try {
          first = await plain.next();
        } catch (error) {
          if (error instanceof SealedChunkError) return null;
          throw error;
        }
        return (async function* () {
          if (first.done) return;
          yield first.value;
          yield* plain;
        })();
      }
      default: {
        const never: never = stored;
        throw new Error(`unknown stored format ${String(never)}`);
      }
    }
  }

  /** The plaintext's size (an unsealed file is its own size); null when there is no such file. */
  async stat(pathId: string): Promise<{ size: number } | null> {
    const stored = await this.inspect(pathId);
    return stored ? { size: sizeOf(stored) } : null;
  }

  /** Removes the bytes and destroys the key: a copy of the file anywhere else is unreadable too. */
  async remove(pathId: string): Promise<void> {
    await this.keys.destroy(uploadKeyIdsOf(pathId));
    await this.inner.remove(pathId);
  }

  async sweepAbandonedSaves(startedBefore: Date): Promise<number> {
    return (await this.inner.sweepAbandonedSaves?.(startedBefore)) ?? 0;
  }
}

/** The uploads storage of this server: sealed when the log is (always, outside tests of plaintext logs). */
export function uploadStorage(ctx: Pick<ServiceContext, 'config' | 'store' | 'db'>): FileStorage {
  const plain = storageFor(ctx);
  return ctx.store.crypto ? new SealedUploadStorage(plain, ctx.store.crypto.keys) : plain;
}

/** After their keys were destroyed: the files' bytes go too (best effort; without the key they are noise anyway). */
export async function removeUploadBytes(ctx: Pick<ServiceContext, 'config' | 'db'>, pathIds: readonly string[]): Promise<void> {
  const plain = storageFor(ctx);
  for (const pathId of pathIds) await plain.remove(pathId).catch(() => undefined);
}
