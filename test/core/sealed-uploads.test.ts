import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { createCipheriv, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { LocalDiskStorage, PostgresStorage, S3Storage, type FileStorage } from '../../src/storage/index.js';
import { collect } from '../../src/storage/file-storage.js';
import { SealedUploadStorage, uploadKeyId } from '../../src/services/upload-crypto.js';
import { legacyUploadKeyId } from '../../src/eventstore/crypto/personal-fields.js';
import type { DataKeyStore } from '../../src/eventstore/crypto/key-store.js';
import type { Db } from '../../src/db/database.js';
import { startTestServer } from '../helpers/server.js';
import { startTestS3 } from '../helpers/s3.js';

// The sealed format's chunk of plaintext, and what each chunk costs at rest (its GCM tag).
const CHUNK = 64 * 1024;
const TAG = 16;
const HEADER = 'ZES-UPLOAD-3\n'.length + 4 + 8;

const pathId = (name: string) => `1/ab/${randomBytes(18).toString('base64url')}/${name}`;

async function* pieces(data: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += size) yield new Uint8Array(data.subarray(at, at + size));
}

async function readRange(storage: FileStorage, id: string, start: number, end: number): Promise<Buffer | null> {
  const stream = await storage.stream(id, { start, end });
  return stream ? collect(stream) : null;
}

/** Reads the whole file; a chunk that does not authenticate rejects (or the file reads as none). */
async function readAll(storage: FileStorage, id: string): Promise<Buffer | null> {
  const stream = await storage.stream(id);
  return stream ? collect(stream) : null;
}

/** Round trips at the chunk boundaries, ranges across them, and tampering, for one plain store under the seal. */
async function sealedContract(t: Test, plain: FileStorage, keys: DataKeyStore, db: Db) {
  const sealed = new SealedUploadStorage(plain, keys);
  for (const size of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 5]) {
    const data = randomBytes(size);
    const id = pathId(`f${size}.bin`);
    // From a stream of pieces that do not line up with the chunks.
    await sealed.save(id, pieces(data, 10_007), 'application/octet-stream');
    const stored = (await plain.read(id))!;
    t.equal(stored.subarray(0, 13).toString(), 'ZES-UPLOAD-3\n', `${size} bytes: stored in the chunked format`);
    t.equal(stored.length, HEADER + size + Math.max(1, Math.ceil(size / CHUNK)) * TAG, `${size} bytes: one tag per chunk (an empty file has one empty chunk)`);
    t.same(await sealed.stat(id), { size }, `${size} bytes: stat gives the plaintext size`);
    t.ok((await sealed.read(id))?.equals(data), `${size} bytes: read back whole`);
    t.ok((await readAll(sealed, id))?.equals(data), `${size} bytes: streamed back whole`);
    if (size > 0) t.ok((await readRange(sealed, id, size - 1, size - 1))?.equals(data.subarray(size - 1)), `${size} bytes: the last byte alone`);
    await sealed.remove(id);
  }

  const data = randomBytes(4 * CHUNK + 100);
  const id = pathId('ranges.bin');
  await sealed.save(id, data, 'application/octet-stream');
  const ranges: Array<[number, number]> = [
    [0, 0], [CHUNK - 1, CHUNK], [CHUNK - 10, 2 * CHUNK + 9], [CHUNK, 2 * CHUNK - 1], [2 * CHUNK, 2 * CHUNK], [3 * CHUNK + 7, 4 * CHUNK + 99], [0, 4 * CHUNK + 99],
  ];
  for (const [start, end] of ranges) {
    t.ok((await readRange(sealed, id, start, end))?.equals(data.subarray(start, end + 1)), `range ${start}-${end}`);
  }

  // Tampering: every variant is refused, none of its bytes served.
  const original = (await plain.read(id))!;
  const chunkAt = (i: number) => HEADER + i * (CHUNK + TAG);
  const tampered: Array<[string, Buffer]> = [];
  const flipped = Buffer.from(original);
  flipped[chunkAt(2) + 5]! ^= 1;
  tampered.push(['a byte flipped in the third chunk', flipped]);
  const swapped = Buffer.concat([original.subarray(0, chunkAt(1)), original.subarray(chunkAt(2), chunkAt(3)), original.subarray(chunkAt(1), chunkAt(2)), original.subarray(chunkAt(3))]);
  tampered.push(['the second and third chunks swapped', swapped]);
  tampered.push(['the last chunk dropped', original.subarray(0, chunkAt(4))]);
  tampered.push(['cut inside the last chunk', original.subarray(0, original.length - 3)]);
  const firstFlipped = Buffer.from(original);
  firstFlipped[HEADER + 1]! ^= 1;
  tampered.push(['a byte flipped in the first chunk', firstFlipped]);
  const header = Buffer.from(original);
  header[HEADER - 1]! ^= 1;
  tampered.push(['the nonce in the header changed', header]);
  for (const [what, bytes] of tampered) {
    await plain.save(id, bytes, 'application/octet-stream');
    t.equal(await sealed.read(id), null, `${what}: read refuses the file`);
    const whole = await readAll(sealed, id).then((b) => ({ served: b }), (error: Error) => ({ error }));
    t.ok('error' in whole || whole.served === null, `${what}: a streamed read ends in an error or finds no file, never the whole file`);
  }
  await plain.save(id, flipped, 'application/octet-stream');
  t.ok((await readRange(sealed, id, 0, 2 * CHUNK - 1))?.equals(data.subarray(0, 2 * CHUNK)), 'a range before a damaged chunk is served (each chunk stands alone)');
  await t.rejects(readRange(sealed, id, 2 * CHUNK - 1, 2 * CHUNK), 'a range reaching into the damaged chunk is refused');
  const served: Buffer[] = [];
  const stream = (await sealed.stream(id))!;
  await t.rejects((async () => {
    for await (const piece of stream) served.push(piece);
  })(), 'streaming the whole file stops at the damaged chunk');
  t.ok(Buffer.concat(served).equals(data.subarray(0, 2 * CHUNK)), 'only the chunks before it were released');

  // Another file's bytes (or a copy moved from another path) do not open under this path's key.
  const other = pathId('other.bin');
  await sealed.save(other, Buffer.from('other'), 'text/plain');
  await plain.save(other, original, 'application/octet-stream');
  t.equal(await sealed.read(other), null, "one file's bytes are not served as another's");

  // Crypto-shredding: without the key a copy of the bytes is noise.
  await plain.save(id, original, 'application/octet-stream');
  t.ok((await sealed.read(id))?.equals(data), 'restored bytes read again');
  await sealed.remove(id);
  t.equal(await db.selectFrom('data_keys').select('key_id').where('key_id', '=', uploadKeyId(id)).executeTakeFirst(), undefined, 'the key is destroyed');
  await plain.save(id, original, 'application/octet-stream');
  t.equal(await sealed.read(id), null, 'a backup copy of a removed file is unreadable');
  t.equal(await sealed.stream(id, { start: 0, end: 10 }), null, 'and no range of it opens');
  await plain.remove(id);
  await sealed.remove(other);
}

/** A file in format 2 (or 1), written the way the server wrote them before format 3. */
async function sealWhole(keys: DataKeyStore, id: string, data: Buffer, format: 1 | 2): Promise<Buffer> {
  const keyId = format === 2 ? uploadKeyId(id) : legacyUploadKeyId(id);
  await keys.ensure([{ keyId, scope: 'upload', subject: keyId.slice('upload:'.length) }]);
  const key = keys.cached(keyId)!;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const ct = Buffer.concat([cipher.update(data), cipher.final()]);
  return Buffer.concat([Buffer.from(`ZES-UPLOAD-${format}\n`), iv, cipher.getAuthTag(), ct]);
}

t.test('sealed uploads in chunks, on every store that runs here', async (t) => {
  const s = await startTestServer(t);
  const keys = s.platform.store.crypto!.keys;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sealed-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await t.test('local disk', (t) => sealedContract(t, new LocalDiskStorage(dir), keys, s.platform.db));
  await t.test('PostgreSQL (the embedded one on the embedded pass)', (t) => sealedContract(t, new PostgresStorage(s.platform.db), keys, s.platform.db));
  await t.test('S3 (s3rver)', async (t) => {
    const s3 = await startTestS3(t);
    await sealedContract(t, new S3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true }), keys, s.platform.db);
  });
});

t.test('files sealed in the earlier formats (one GCM message) still read, whole and in ranges, and shred the same', async (t) => {
  const s = await startTestServer(t);
  const keys = s.platform.store.crypto!.keys;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sealed-old-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const plain: FileStorage = new LocalDiskStorage(dir);
  const sealed = new SealedUploadStorage(plain, keys);
  for (const format of [1, 2] as const) {
    const data = randomBytes(3 * CHUNK + 11);
    const id = pathId(`old${format}.bin`);
    await plain.save(id, await sealWhole(keys, id, data, format), 'application/octet-stream');
    t.ok((await sealed.read(id))?.equals(data), `format ${format}: read whole`);
    t.same(await sealed.stat(id), { size: data.length }, `format ${format}: its plaintext size`);
    t.ok((await readRange(sealed, id, CHUNK - 3, CHUNK + 3))?.equals(data.subarray(CHUNK - 3, CHUNK + 4)), `format ${format}: a range`);
    const stored = (await plain.read(id))!;
    const flipped = Buffer.from(stored);
    flipped[flipped.length - 1]! ^= 1;
    await plain.save(id, flipped, 'application/octet-stream');
    t.equal(await sealed.read(id), null, `format ${format}: a flipped byte is refused`);
    t.equal(await sealed.stream(id, { start: 0, end: 9 }), null, `format ${format}: even for a range far from it`);
    await plain.save(id, stored, 'application/octet-stream');
    await sealed.remove(id);
    await plain.save(id, stored, 'application/octet-stream');
    t.equal(await sealed.read(id), null, `format ${format}: unreadable once shredded`);
  }
  const unsealed = pathId('plain.txt');
  await plain.save(unsealed, Buffer.from('stored before sealing'), 'text/plain');
  t.equal((await readRange(sealed, unsealed, 7, 12))?.toString(), 'before', 'a file stored before sealing is served as it is, ranges too');
});
