import t, { type Test } from 'tap';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { randomBytes, randomUUID } from 'node:crypto';
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

/**
 * A save cut off part way (as by the process dying) leaves its partial bytes behind; the hourly
 * cleanup sweeps those begun before its cut-off, never a save still running nor a finished file
 * whose name looks like a partial one. `partials` counts what the store holds of unfinished saves.
 */
async function abandonedSaves(t: Test, storage: FileStorage, partials: () => Promise<number>, lookalikes: string[]) {
  const kept = lookalikes.map(pathId);
  for (const id of kept) await storage.save(id, Buffer.from('a finished file'), 'text/plain');
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  async function* cutOff(): AsyncGenerator<Uint8Array> {
    yield randomBytes(CHUNK_SIZE + 1);
    await held;
    throw new Error('the process died');
  }
  const saving = storage.save(pathId('cut-off.bin'), cutOff(), 'application/octet-stream').catch((error: Error) => error.message);
  const deadline = Date.now() + 5_000;
  while ((await partials()) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(await partials(), 1, 'a save part way through holds partial bytes');
  t.equal(await storage.sweepAbandonedSaves!(new Date(Date.now() - 3_600_000)), 0, 'one begun after the cut-off is left alone');
  t.equal(await partials(), 1, 'and still there');
  t.equal(await storage.sweepAbandonedSaves!(new Date(Date.now() + 60_000)), 1, 'one begun before the cut-off is swept');
  t.equal(await partials(), 0, 'and gone');
  for (const id of kept) t.equal((await storage.read(id))?.toString(), 'a finished file', `a finished file named like a partial one stays: ${id.split('/')[3]}`);
  release();
  t.equal(await saving, 'the process died');
  t.equal(await partials(), 0, 'nothing left');
  for (const id of kept) await storage.remove(id);
}

t.test('local disk store', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'store-local-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await contract(t, new LocalDiskStorage(dir));
  const partials = async () => (await readdir(path.join(dir, '.partial')).catch(() => [])).length;
  await abandonedSaves(t, new LocalDiskStorage(dir), partials, [`notes.${randomUUID()}.part`, 'x.part']);
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

  // Staging rows: a fifth path segment under a real path id.
  const partials = async () => (await s.platform.db.selectFrom('stored_files').select('path_id').where('path_id', 'like', '%/%/%/%/%').execute()).length;
  await abandonedSaves(t, storage, partials, [`report staging ${randomUUID()}`, 'staging-plan.txt']);
  t.same(await s.platform.db.selectFrom('stored_file_chunks').select('path_id').execute(), [], 'the swept save\'s chunks went with it');
});

t.test('S3 store against s3rver on loopback', async (t) => {
  const s3 = await startTestS3(t);
  await contract(t, new S3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true }));
  // s3rver implements neither ListMultipartUploads nor AbortMultipartUpload, so that a failed save
  // leaves no open multipart upload behind is not checked here (the store sends the abort).
  const wrong = new S3Storage({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
  await t.rejects(wrong.save(pathId('x.txt'), Buffer.from('x'), 'text/plain'), 'a missing bucket is an error, not a silent loss');
});
