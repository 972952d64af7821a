import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from '../config.js';
import { assertPathId, collect, type ByteRange, type FileBytes, type FileStorage } from './file-storage.js';

type Sdk = typeof import('@aws-sdk/client-s3');
// Loaded on first use: the SDK is large, and only servers that keep files in S3 need it.
let sdk: Promise<Sdk> | undefined;
const loadSdk = () => (sdk ??= import('@aws-sdk/client-s3'));
let libStorage: Promise<typeof import('@aws-sdk/lib-storage')> | undefined;
const loadLibStorage = () => (libStorage ??= import('@aws-sdk/lib-storage'));

/** S3's smallest part but the last. */
export const PART_SIZE = 5 * 1024 * 1024;
/** Parts sent at once during one upload (each held in memory until S3 has it). */
const UPLOAD_PARTS_IN_FLIGHT = 2;

const statusOf = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const notFound = (error: unknown) => {
  const name = (error as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404;
};

/** The first `limit` bytes: some S3-compatible servers (s3rver) send to the end for `bytes=0-0`. */
async function* atMost(pieces: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let left = limit;
  for await (const piece of pieces) {
    if (left <= 0) return;
    const chunk = Buffer.from(piece);
    yield chunk.length > left ? chunk.subarray(0, left) : chunk;
    left -= chunk.length;
  }
}

/**
 * Files as objects in an S3-compatible bucket, one object per path id (its key). Credentials come
 * from the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role).
 */
export class S3Storage implements FileStorage {
  private readonly bucket: string;
  private opened: Promise<{ client: S3Client; sdk: Sdk }> | undefined;

  constructor(private readonly settings: S3Settings) {
    this.bucket = settings.bucket;
  }

  private open(): Promise<{ client: S3Client; sdk: Sdk }> {
    this.opened ??= loadSdk().then((loaded) => ({
      sdk: loaded,
      client: new loaded.S3Client({
        region: this.settings.region,
        endpoint: this.settings.endpoint,
        forcePathStyle: this.settings.forcePathStyle,
        // Checksums only where S3 requires them: many S3-compatible servers reject the newer default ones.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      }),
    }));
    return this.opened;
  }

  /**
   * Streams into the bucket through the SDK's managed upload (@aws-sdk/lib-storage): a plain
   * PutObject needs the length before the first byte, and we learn an upload's length only at its
   * end. A file that ends within its first part is one PutObject; a longer one is a multipart upload
   * in parts of PART_SIZE, aborted on any failure so that no part is left behind. At most
   * UPLOAD_PARTS_IN_FLIGHT parts are held in memory, however large the file.
   */
  async save(pathId: string, data: FileBytes, contentType: string): Promise<void> {
    assertPathId(pathId);
    const { client } = await this.open();
    const { Upload } = await loadLibStorage();
    const body = Readable.from(data);
    // The managed upload reports the failure of its abort (some S3 servers refuse it), not the
    // source's: the source's error is the one that says what happened.
    let sourceError: unknown;
    body.once('error', (error) => (sourceError = error));
    const upload = new Upload({
      client,
      params: { Bucket: this.bucket, Key: pathId, Body: body, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: UPLOAD_PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw sourceError ?? error;
    }
  }

  async read(pathId: string): Promise<Buffer | null> {
    const pieces = await this.stream(pathId);
    return pieces ? collect(pieces) : null;
  }

  async stream(pathId: string, range?: ByteRange): Promise<AsyncIterable<Buffer> | null> {
    const { client, sdk } = await this.open();
    try {
      const answer = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.bucket, Key: pathId, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      if (!answer.Body) return null;
      const body = answer.Body as AsyncIterable<Buffer>;
      return range ? atMost(body, range.end - range.start + 1) : body;
    } catch (error) {
      if (notFound(error)) return null;
      // An empty object has no satisfiable range; it has no bytes to give either.
      if (statusOf(error) === 416) return (async function* () {})();
      throw error;
    }
  }

  async stat(pathId: string): Promise<{ size: number } | null> {
    const { client, sdk } = await this.open();
    try {
      const head = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: pathId }));
      return { size: head.ContentLength ?? 0 };
    } catch (error) {
      if (notFound(error)) return null;
      throw error;
    }
  }

  async remove(pathId: string): Promise<void> {
    const { client, sdk } = await this.open();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: pathId }));
  }
}
