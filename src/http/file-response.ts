import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';
import { Readable } from 'node:stream';
import { ApiError } from '../domain/errors.js';
import type { ByteRange, FileStorage } from '../storage/index.js';
import { SealedUploadStorage } from '../services/upload-crypto.js';

export interface FileValidators {
  /** What names these exact bytes: a path id and version never get other bytes, so it makes a strong ETag. */
  identity: string;
  lastModified?: Date;
}

const etagOf = (identity: string, size: number) => `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}-${size.toString(16)}"`;

const matchesAny = (header: string, etag: string) => header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);

/** A stored file to send: its size, and its bytes (or one range of them) piece by piece. */
export interface FileSource {
  size: number;
  /** null when the bytes are gone (or do not authenticate) since the size was read. */
  open(range?: ByteRange): Promise<AsyncIterable<Buffer> | null>;
}

/** A file of `storage`, or null when there is none. */
export async function storedFileSource(storage: FileStorage, pathId: string): Promise<FileSource | null> {
  // A sealed store reads the envelope once for both the size and the stream.
  if (storage instanceof SealedUploadStorage) return storage.source(pathId);
  const stat = await storage.stat(pathId);
  return stat ? { size: stat.size, open: (range) => storage.stream(pathId, range) } : null;
}

/** Bytes already in memory (a small image) as a FileSource. */
export function bytesSource(data: Buffer | Uint8Array): FileSource {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    size: bytes.length,
    open: async (range) => Readable.from([range ? bytes.subarray(range.start, range.end + 1) : bytes]),
  };
}

const fileNotFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');

/**
 * Sends a stored file the way nginx serves the real server's uploads: ETag and Last-Modified,
 * 304 for a cached copy, and one byte range on request (206 with Content-Range; 416 with
 * `Content-Range: bytes *\/size` when none of it exists). Several ranges in one request get the
 * whole file, which HTTP allows. The bytes are streamed from the store with their length declared,
 * so a file whose later chunk fails to authenticate ends the response short instead of serving it.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileSource, validators: FileValidators): Promise<FastifyReply> {
  const size = file.size;
  const etag = etagOf(validators.identity, size);
  reply.header('ETag', etag).header('Accept-Ranges', 'bytes');
  if (validators.lastModified) reply.header('Last-Modified', validators.lastModified.toUTCString());
  const ifNoneMatch = request.headers['if-none-match'] as string | undefined;
  const ifModifiedSince = request.headers['if-modified-since'];
  const fresh = ifNoneMatch !== undefined
    ? matchesAny(ifNoneMatch, etag)
    : ifModifiedSince !== undefined && validators.lastModified !== undefined && Math.floor(validators.lastModified.getTime() / 1000) <= Date.parse(ifModifiedSince) / 1000;
  if (fresh) return reply.status(304).send();

  const range = request.headers.range;
  const ifRange = request.headers['if-range'] as string | undefined;
  // If-Range: the range applies only to the copy the client already has part of.
  const rangeApplies = range !== undefined && (ifRange === undefined || ifRange.trim() === etag ||
    (validators.lastModified !== undefined && Date.parse(ifRange) === Math.floor(validators.lastModified.getTime() / 1000) * 1000));
  if (rangeApplies) {
    const ranges = parseRange(size, range, { combine: true });
    if (ranges === -1) {
      throw new ApiError('BAD_REQUEST', 416, 'Requested range not satisfiable', {}, { 'Content-Range': `bytes */${size}` });
    }
    // -2 (a header we do not understand) and several ranges: the whole file, as HTTP allows.
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
      const { start, end } = ranges[0]!;
      const body = await file.open({ start, end });
      if (!body) throw fileNotFound();
      return reply.status(206).header('Content-Range', `bytes ${start}-${end}/${size}`).header('Content-Length', end - start + 1).send(Readable.from(body));
    }
  }
  const body = await file.open();
  if (!body) throw fileNotFound();
  return reply.header('Content-Length', size).send(Readable.from(body));
}

/** sendFile for bytes already in memory. */
export function sendFileBytes(request: FastifyRequest, reply: FastifyReply, data: Buffer | Uint8Array, validators: FileValidators): Promise<FastifyReply> {
  return sendFile(request, reply, bytesSource(data), validators);
}
