import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { errors } from '../domain/errors.js';
import { fileTooLarge, withinLimit } from '../services/attachments.js';

/** A file part as it arrives: its bytes can be read once, from the socket. */
export interface IncomingFile {
  fieldname: string;
  filename: string;
  mimetype: string;
  data: AsyncIterable<Uint8Array>;
}

/** Bytes a route's `store` wrote for one part; removed after the response unless the handler kept them. */
export interface StoredFile {
  /** Set by the handler once it has recorded the file: it then stays. */
  kept: boolean;
  discard(): Promise<void>;
}

/**
 * How a route takes files (RouteSpec.files). With `store`, each file part is streamed into it as it
 * arrives and the handler finds what it returned with storedFile(part); without, the part is read
 * into memory (part._buf) after the size check, for routes that must decode a small image whole.
 * The limit is checked against Content-Length before any of the body is read, and again on the
 * bytes as they arrive (a body without Content-Length, or one that lies).
 */
export interface FileUploadSpec<S extends StoredFile = StoredFile> {
  maxMib(): number;
  store?(request: FastifyRequest, file: IncomingFile): Promise<S>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    files?: FileUploadSpec;
  }
}

/** toBuffer()'s cache in @fastify/multipart's part, which the routes that decode images read. */
type BufferedPart = MultipartFile & { _buf?: Buffer | null };

/** Room for the multipart framing and a few small fields beside a file of the largest size. */
const FRAMING_ALLOWANCE = 64 * 1024;

const storedParts = new WeakMap<object, StoredFile>();
const storedOfRequest = new WeakMap<FastifyRequest, StoredFile[]>();

/** What the route's `store` returned for this part (undefined for a route without one). */
export function storedFile<S extends StoredFile>(part: object): S | undefined {
  return storedParts.get(part) as S | undefined;
}

/**
 * Installs the size check on Content-Length (preParsing: after authentication, before the body is
 * read) and returns the multipart parser's `onFile`, which streams, buffers or drains each part.
 * `defaultMaxMib` limits file parts sent to a route that takes no files (they are read and dropped).
 */
export function fileUploads(app: FastifyInstance, defaultMaxMib: () => number) {
  const limitOf = (request: FastifyRequest) => request.routeOptions.config?.files?.maxMib() ?? defaultMaxMib();

  app.addHook('preParsing', async (request) => {
    if (!/^multipart\//i.test(request.headers['content-type'] ?? '')) return;
    const declared = Number(request.headers['content-length']);
    const maxMib = limitOf(request);
    // The body holds the file: when its declared length already passes the limit, the answer
    // goes out before any of it is read (as the real server's nginx does with client_max_body_size).
    if (Number.isFinite(declared) && declared > maxMib * 1024 * 1024 + FRAMING_ALLOWANCE) throw fileTooLarge(maxMib, 413);
  });

  // A stored file the handler did not keep (the request failed after the bytes were written) is
  // removed before the answer goes out; onResponse catches an answer that never went out.
  const discardUnkept = async (request: FastifyRequest) => {
    const files = storedOfRequest.get(request) ?? [];
    storedOfRequest.delete(request);
    for (const file of files) if (!file.kept) await file.discard().catch(() => undefined);
  };
  app.addHook('onSend', async (request, _reply, payload) => {
    await discardUnkept(request);
    return payload;
  });
  app.addHook('onResponse', discardUnkept);

  return async function onFile(this: FastifyRequest, part: BufferedPart): Promise<void> {
    const spec = this.routeOptions.config?.files;
    const maxMib = limitOf(this);
    const counted = { size: 0 };
    const data = withinLimit(part.file, maxMib, counted);
    if (!spec) {
      for await (const _ of data) void _;
      return;
    }
    if (!spec.store) {
      // Only for images decoded whole (sharp): their limits are a few MiB, and checked as they arrive.
      const pieces: Uint8Array[] = [];
      for await (const piece of data) pieces.push(piece);
      part._buf = Buffer.concat(pieces, counted.size);
      return;
    }
    if (this.routeOptions.config?.auth !== 'none' && !this.user) throw errors.unauthorized();
    const stored = await spec.store(this, { fieldname: part.fieldname, filename: part.filename, mimetype: part.mimetype, data });
    storedParts.set(part, stored);
    storedOfRequest.set(this, [...(storedOfRequest.get(this) ?? []), stored]);
  };
}
