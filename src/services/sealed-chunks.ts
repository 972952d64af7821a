import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rechunk, type ByteRange, type FileBytes } from '../storage/file-storage.js';

/**
 * Sealed format 3 ("ZES-UPLOAD-3"): a file sealed in chunks, so that it can be written from a
 * stream and read back (whole or one range) chunk by chunk, never releasing a byte before the
 * chunk holding it has authenticated.
 *
 *   header  = MAGIC ‖ chunk size (uint32 BE) ‖ 8-byte random nonce prefix
 *   chunk i = AES-256-GCM(plaintext[i·C, (i+1)·C)) ‖ 16-byte tag
 *             nonce = nonce prefix ‖ i (uint32 BE)
 *             associated data = header ‖ key id ‖ i (uint32 BE) ‖ 1 if i is the last chunk else 0
 *
 * The index in the nonce and associated data stops chunks being reordered; the last-chunk flag
 * stops a file being cut at a chunk boundary (the new last chunk was sealed as not last); the key
 * id binds the bytes to their path. Every file has at least one chunk (an empty file is one empty
 * last chunk), so a file cut back to its header is refused too.
 */
export const CHUNKED_MAGIC = Buffer.from('ZES-UPLOAD-3\n', 'utf8');
export const SEALED_CHUNK_SIZE = 64 * 1024;
const TAG = 16;
const NONCE_PREFIX = 8;
export const CHUNKED_HEADER_SIZE = CHUNKED_MAGIC.length + 4 + NONCE_PREFIX;
// A header naming a chunk size outside these bounds was not written by us; refused before any read.
const MIN_CHUNK = 1024;
const MAX_CHUNK = 4 * 1024 * 1024;

/** A chunk that does not authenticate: the stored bytes were changed, reordered, cut or moved. */
export class SealedChunkError extends Error {}

export interface ChunkedLayout {
  header: Buffer;
  chunkSize: number;
  /** How many chunks the stored file has (at least 1). */
  chunks: number;
  /** The plaintext's size. */
  size: number;
}

function chunkData(header: Buffer, keyId: string, index: number, last: boolean): { nonce: Buffer; aad: Buffer } {
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(index);
  const nonce = Buffer.concat([header.subarray(CHUNKED_MAGIC.length + 4), counter]);
  return { nonce, aad: Buffer.concat([header, Buffer.from(keyId, 'utf8'), counter, Buffer.from([last ? 1 : 0])]) };
}

function sealChunk(key: Buffer, header: Buffer, keyId: string, index: number, last: boolean, plain: Buffer): Buffer {
  const { nonce, aad } = chunkData(header, keyId, index, last);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function openChunk(key: Buffer, header: Buffer, keyId: string, index: number, last: boolean, sealed: Buffer): Buffer {
  if (sealed.length < TAG) throw new SealedChunkError(`chunk ${index} is cut short`);
  const { nonce, aad } = chunkData(header, keyId, index, last);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
  } catch {
    throw new SealedChunkError(`chunk ${index} does not authenticate`);
  }
}

/** The sealed bytes of `data`, header first, one chunk at a time (one chunk is held back to know which is last). */
export async function* sealChunks(key: Buffer, keyId: string, data: FileBytes, chunkSize = SEALED_CHUNK_SIZE): AsyncGenerator<Buffer> {
  const header = Buffer.alloc(CHUNKED_HEADER_SIZE);
  CHUNKED_MAGIC.copy(header);
  header.writeUInt32BE(chunkSize, CHUNKED_MAGIC.length);
  randomBytes(NONCE_PREFIX).copy(header, CHUNKED_MAGIC.length + 4);
  yield header;
  let index = 0;
  let pending: Buffer | null = null;
  for await (const piece of rechunk(data, chunkSize)) {
    // rechunk may hand out views of a buffer it reuses: copy what is held back.
    if (pending) yield sealChunk(key, header, keyId, index++, false, pending);
    pending = Buffer.from(piece);
  }
  yield sealChunk(key, header, keyId, index, true, pending ?? Buffer.alloc(0));
}

export const isChunkedHeader = (head: Buffer) => head.length >= CHUNKED_HEADER_SIZE && head.subarray(0, CHUNKED_MAGIC.length).equals(CHUNKED_MAGIC);

/** Where the chunks of a stored file of `storedSize` bytes lie; null when no file we wrote has that shape. */
export function chunkedLayout(head: Buffer, storedSize: number): ChunkedLayout | null {
  if (!isChunkedHeader(head)) return null;
  const header = head.subarray(0, CHUNKED_HEADER_SIZE);
  const chunkSize = header.readUInt32BE(CHUNKED_MAGIC.length);
  if (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK) return null;
  const body = storedSize - CHUNKED_HEADER_SIZE;
  const full = Math.floor(body / (chunkSize + TAG));
  const rest = body % (chunkSize + TAG);
  if (rest === 0) return full === 0 ? null : { header, chunkSize, chunks: full, size: full * chunkSize };
  if (rest < TAG) return null;
  return { header, chunkSize, chunks: full + 1, size: full * chunkSize + rest - TAG };
}

/** The stored bytes holding the chunks that cover `range` of the plaintext, and the first chunk's index. */
export function storedRangeOf(layout: ChunkedLayout, range: ByteRange): { stored: ByteRange; first: number; last: number } {
  const step = layout.chunkSize + TAG;
  const first = Math.floor(range.start / layout.chunkSize);
  const last = Math.min(Math.floor(range.end / layout.chunkSize), layout.chunks - 1);
  const storedSize = CHUNKED_HEADER_SIZE + layout.size + layout.chunks * TAG;
  return {
    stored: { start: CHUNKED_HEADER_SIZE + first * step, end: Math.min(CHUNKED_HEADER_SIZE + (last + 1) * step, storedSize) - 1 },
    first,
    last,
  };
}

/**
 * The plaintext of `range` from `sealed` (the stored bytes storedRangeOf named), chunk by chunk:
 * each chunk is authenticated before any byte of it is yielded; a bad one throws SealedChunkError.
 */
export async function* openChunks(
  key: Buffer,
  keyId: string,
  layout: ChunkedLayout,
  range: ByteRange,
  sealed: AsyncIterable<Uint8Array>,
): AsyncGenerator<Buffer> {
  const { first, last } = storedRangeOf(layout, range);
  let index = first;
  for await (const piece of rechunk(sealed, layout.chunkSize + TAG)) {
    if (index > last) throw new SealedChunkError('more stored bytes than the file has');
    const plain = openChunk(key, layout.header, keyId, index, index === layout.chunks - 1, Buffer.from(piece));
    const expected = index === layout.chunks - 1 ? layout.size - index * layout.chunkSize : layout.chunkSize;
    if (plain.length !== expected) throw new SealedChunkError(`chunk ${index} has the wrong length`);
    const base = index * layout.chunkSize;
    const cut = plain.subarray(Math.max(0, range.start - base), Math.min(plain.length, range.end - base + 1));
    if (cut.length > 0) yield cut;
    index += 1;
  }
  if (index <= last) throw new SealedChunkError(`chunk ${index} is missing`);
}
