/** An inclusive byte range of a stored file, as an HTTP Range header names one. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Bytes to save: whole, or as a stream of pieces (never held whole by the stores that take streams). */
export type FileBytes = Buffer | AsyncIterable<Uint8Array>;

/**
 * Where uploaded files' bytes live. The log records that a file exists (AttachmentUploaded) and
 * that it is gone (AttachmentDeleted); the bytes are written before the first event is appended
 * and removed after the second one committed, so an event never names missing bytes.
 */
export interface FileStorage {
  /** Writes the whole file; a reader sees the old bytes or the new ones, never a part. */
  save(pathId: string, data: FileBytes, contentType: string): Promise<void>;
  /** The bytes, or null when there is no such file. */
  read(pathId: string): Promise<Buffer | null>;
  /** The bytes (or one range of them) piece by piece, or null when there is no such file. */
  stream(pathId: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | null>;
  /** The file's size in bytes, or null when there is no such file. */
  stat(pathId: string): Promise<{ size: number } | null>;
  /** Removes the file; removing a missing file is not an error. */
  remove(pathId: string): Promise<void>;
  /**
   * Removes what saves begun before `startedBefore` and never finished (the process died part way)
   * left behind, and says how many. Stores whose unfinished saves are not theirs to list leave it out
   * (S3: an incomplete multipart upload is the bucket's lifecycle rule's to abort).
   */
  sweepAbandonedSaves?(startedBefore: Date): Promise<number>;
}

/**
 * How old an unfinished save must be before it counts as abandoned: far longer than any upload of
 * the largest accepted file takes, so a save still running on another replica is never swept.
 */
export const ABANDONED_SAVE_AGE_MS = 24 * 3600 * 1000;

/** `<realm_id>/<2 hex>/<24 random>/<file name>`, the shape of every path id this server makes. */
export const PATH_ID_FORM = /^\d+\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/[^/\\\u0000]+$/;

export function assertPathId(pathId: string): void {
  if (!PATH_ID_FORM.test(pathId) || pathId.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`invalid path id: ${pathId}`);
  }
}

/** Pieces of `data` of exactly `size` bytes each (the last one may be shorter). */
export async function* rechunk(data: FileBytes, size: number): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(data)) {
    for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
    return;
  }
  let pending: Buffer[] = [];
  let length = 0;
  for await (const piece of data) {
    pending.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
    length += piece.byteLength;
    if (length < size) continue;
    const joined = pending.length === 1 ? pending[0]! : Buffer.concat(pending, length);
    let at = 0;
    for (; length - at >= size; at += size) yield joined.subarray(at, at + size);
    pending = at < length ? [joined.subarray(at)] : [];
    length -= at;
  }
  if (length > 0) yield Buffer.concat(pending, length);
}

export async function collect(pieces: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const piece of pieces) all.push(Buffer.from(piece));
  return Buffer.concat(all);
}
