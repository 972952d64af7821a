import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { LocalDiskStorage, PostgresStorage, S3Storage, type FileStorage } from '../../src/storage/index.js';
import { CHUNK_SIZE } from '../../src/storage/postgres-storage.js';
import { PART_SIZE } from '../../src/storage/s3-storage.js';
import { collect } from '../../src/storage/file-storage.js';
import { startTestServer } from '../helpers/server.js';
import { startTestS3 } from '../helpers/s3.js';

const pathId = (name: string) => `1/ab/${randomBytes(18).toString('base64url')}/${name}`;

async function* pieces(data: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += size) yield new Uint8Array(data.subarray(at, at + size));
}

/** What every store must do, the same way. */
async function contract(t: Test, storage: FileStorage) {
  const big = randomBytes(CHUNK_SIZE * 2 + 12_345);
  const id = pathId('big.bin');
  t.equal(await storage.read(id), null, 'a missing file reads as null');
  t.equal(await storage.stat(id), null, 'and has no size');
  t.equal(await storage.stream(id), null, 'and no stream');
  await storage.save(id, big, 'application/octet-stream');
  t.ok((await storage.read(id))?.equals(big), 'the bytes come back whole');
  t.same(await storage.stat(id), { size: big.length }, 'stat gives the size');
  const across = { start: CHUNK_SIZE - 10, end: CHUNK_SIZE + 9 };
  t.ok((await collect((await storage.stream(id, across))!)).equals(big.subarray(across.start, across.end + 1)), 'a range across a chunk boundary');
  const tail = { start: big.length - 5, end: big.length - 1 };
  t.ok((await collect((await storage.stream(id, tail))!)).equals(big.subarray(-5)), 'the last bytes');
  t.ok((await collect((await storage.stream(id, { start: 0, end: 0 }))!)).equals(big.subarray(0, 1)), 'the first byte');

  const streamed = pathId('streamed.bin');
  await storage.save(streamed, pieces(big, 70_001), 'application/octet-stream');
  t.ok((await storage.read(streamed))?.equals(big), 'a file saved from a stream of odd-sized pieces');
  await storage.save(streamed, Buffer.from('replaced'), 'text/plain');
  t.equal((await storage.read(streamed))?.toString(), 'replaced', 'saving again replaces the bytes');

  const empty = pathId('empty.txt');
  await storage.save(empty, Buffer.alloc(0), 'text/plain');
  t.same(await storage.stat(empty), { size: 0 }, 'an empty file exists');
  t.equal((await storage.read(empty))?.length, 0);

  // Larger than one S3 part (5 MiB), from a stream: the S3 store's multipart path.
  const large = randomBytes(PART_SIZE * 2 + 77);
  const multi = pathId('large.bin');
  await storage.save(multi, pieces(large, 65_536), 'application/octet-stream');
  t.ok((await storage.read(multi))?.equals(large), 'a file of several S3 parts, saved from a stream');

  // A stream that fails part way (a client gone, a size limit passed): nothing of it is left.
  for (const at of [1000, PART_SIZE + 1000]) {
    const failing = pathId(`failing-${at}.bin`);
    async function* breaks(): AsyncGenerator<Uint8Array> {
      yield* pieces(large.subarray(0, at), 65_536);
      throw new Error('the client went away');
    }
    await t.rejects(storage.save(failing, breaks(), 'application/octet-stream'), /went away/, `a save failing after ${at} bytes fails`);
    t.equal(await storage.stat(failing), null, `and leaves no file (${at} bytes in)`);
  }

  for (const p of [id, streamed, empty, multi]) await storage.remove(p);
  t.equal(await storage.read(id), null, 'removed');
  await storage.remove(id);
  t.pass('removing a missing file is not an error');
  await t.rejects(storage.save('../../etc/passwd', Buffer.from('x'), 'text/plain'), /invalid path id/, 'a path id of another shape is refused');
}

t.test('local disk store', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'store-local-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await contract(t, new LocalDiskStorage(dir));
});

t.test('PostgreSQL store (the embedded database on the embedded pass): chunks of at most 256 KiB', async (t) => {
  const s = await startTestServer(t);
  const storage = new PostgresStorage(s.platform.db);
  await contract(t, storage);
  const id = pathId('rows.bin');
  await storage.save(id, randomBytes(CHUNK_SIZE * 3 + 1), 'application/octet-stream');
  const rows = await s.platform.db.selectFrom('stored_file_chunks').select(['chunk_index', 'data']).where('path_id', '=', id).orderBy('chunk_index').execute();
  t.same(rows.map((r) => [r.chunk_index, r.data.length]), [[0, CHUNK_SIZE], [1, CHUNK_SIZE], [2, CHUNK_SIZE], [3, 1]], 'one row per chunk');
  await storage.remove(id);
  const left = await s.platform.db.selectFrom('stored_file_chunks').select('path_id').where('path_id', '=', id).execute();
  t.same(left, [], 'removing the file removes its chunks');
  t.same(await s.platform.db.selectFrom('stored_files').select('path_id').execute(), [], 'no staging rows are left by the saves that failed');
  t.same(await s.platform.db.selectFrom('stored_file_chunks').select('path_id').execute(), [], 'nor their chunks');

  // A save arrives at its client's speed: meanwhile the database answers other queries (on PGlite,
  // one connection, a save in one long transaction would have blocked them all).
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  async function* slow(): AsyncGenerator<Uint8Array> {
    yield randomBytes(CHUNK_SIZE + 1);
    await held;
    yield randomBytes(10);
  }
  const slowId = pathId('slow.bin');
  const saving = storage.save(slowId, slow(), 'application/octet-stream');
  const other = s.platform.db.selectFrom('users').select('id').limit(1).execute().then(() => 'answered');
  const waited = await Promise.race([other, new Promise((resolve) => setTimeout(() => resolve('blocked'), 3000))]);
  t.equal(waited, 'answered', 'another query is answered while a save waits for its bytes');
  t.equal(await storage.stat(slowId), null, 'and the file does not exist until its last byte is stored');
  release();
  await saving;
  t.same(await storage.stat(slowId), { size: CHUNK_SIZE + 11 }, 'then it does, whole');
  await storage.remove(slowId);
});

t.test('S3 store against s3rver on loopback', async (t) => {
  const s3 = await startTestS3(t);
  await contract(t, new S3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true }));
  // s3rver implements neither ListMultipartUploads nor AbortMultipartUpload, so that a failed save
  // leaves no open multipart upload behind is not checked here (the store sends the abort).
  const wrong = new S3Storage({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
  await t.rejects(wrong.save(pathId('x.txt'), Buffer.from('x'), 'text/plain'), 'a missing bucket is an error, not a silent loss');
});
