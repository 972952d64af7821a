import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from '../helpers/server.js';
import { entryPointArgs, repoRoot } from '../helpers/repo-root.js';
import { PNG, sendFiles } from '../helpers/upload.js';
import { solidPng } from '../helpers/images.js';
import { startTestS3 } from '../helpers/s3.js';
import { migrateFiles } from '../../src/services/file-migration.js';
import { referencedFiles } from '../../src/services/referenced-files.js';
import { SealedUploadStorage } from '../../src/services/upload-crypto.js';
import { LocalDiskStorage, PostgresStorage, S3Storage, type FileStorage } from '../../src/storage/index.js';

t.test('migrate-files copies every referenced file, verifies each by hash, and can run again', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'migrate-files-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local' });
  const alice = await s.user();
  const form = (name: string, text: string) => ({ field: 'file', data: Buffer.from(text), name });
  t.equal((await sendFiles(s, alice, 'POST', '/user_uploads', [form('a.txt', 'first file')])).status, 200);
  t.equal((await sendFiles(s, alice, 'POST', '/user_uploads', [form('b.txt', 'second file')])).status, 200);
  t.equal((await sendFiles(s, alice, 'POST', '/users/me/avatar', [{ field: 'file', data: PNG }])).status, 200);
  t.equal((await sendFiles(s, s.owner, 'POST', '/realm/emoji/moved', [{ field: 'file', data: PNG }])).status, 200);
  t.equal((await sendFiles(s, s.owner, 'POST', '/realm/icon', [{ field: 'file', data: await solidPng(100, { r: 0, g: 90, b: 0 }) }])).status, 200);

  const files = [];
  for await (const file of referencedFiles(s.platform.db)) files.push(file);
  const required = files.filter((f) => !f.optional);
  t.equal(required.length, 5, 'two uploads, an avatar, an emoji, the realm icon');
  t.equal(files.length, 6, "and the emoji's original image");

  const local = new LocalDiskStorage(path.join(dataDir, 'uploads'));
  const postgres = new PostgresStorage(s.platform.db);
  const first = await migrateFiles(s.platform.db, local, postgres);
  t.match(first, { copied: files.length, present: 0, missing: [], mismatched: [] });
  for (const file of files) {
    const want = await local.read(file.pathId);
    if (want) t.ok((await postgres.read(file.pathId))?.equals(want), `${file.pathId} is in the target as stored (sealed bytes stay sealed)`);
  }
  const again = await migrateFiles(s.platform.db, local, postgres);
  t.match(again, { copied: 0, present: first.copied, missing: [], mismatched: [] }, 'a second run copies nothing (resumable)');

  // A target that changes what it is given is caught by the hash read back from it.
  const lossy: FileStorage = {
    stream: (p, r) => postgres.stream(p, r),
    stat: (p) => postgres.stat(p),
    read: (p) => postgres.read(p),
    remove: (p) => postgres.remove(p),
    save: async (p, data, type) => {
      const chunks: Buffer[] = [];
      for await (const c of data as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
      const bytes = Buffer.concat(chunks);
      bytes[0] = bytes[0]! ^ 0xff;
      await postgres.save(p, bytes, type);
    },
  };
  await postgres.remove(required[0]!.pathId);
  const broken = await migrateFiles(s.platform.db, local, lossy);
  t.same(broken.mismatched, [required[0]!.pathId], 'a copy that does not read back the same is reported');

  // A file lost from the source is reported, not invented.
  await local.remove(required[1]!.pathId);
  await postgres.remove(required[1]!.pathId);
  const lost = await migrateFiles(s.platform.db, local, postgres);
  t.same(lost.missing, [required[1]!.pathId], 'a file in neither store is listed as missing');
  t.same(lost.mismatched, [], 'and the broken copy was mended by this run');

  // On to S3.
  const s3 = await startTestS3(t);
  const bucket = new S3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
  const toS3 = await migrateFiles(s.platform.db, postgres, bucket);
  t.match(toS3, { copied: first.copied - 1, missing: [required[1]!.pathId], mismatched: [] }, 'PostgreSQL to S3');
  const avatar = files.find((f) => f.pathId.endsWith('/avatar'))!;
  t.ok((await bucket.read(avatar.pathId))?.equals((await postgres.read(avatar.pathId))!), 'the avatar in the bucket is stored as it was');
  // Avatars are sealed at rest: opened with its key, the copy in the bucket is the uploaded image.
  const sealed = s.platform.store.crypto ? new SealedUploadStorage(bucket, s.platform.store.crypto.keys) : bucket;
  t.ok((await sealed.read(avatar.pathId))?.equals(PNG), 'the avatar in the bucket opens to the uploaded image');
});

t.test('npm run cli -- migrate-files: summary line and exit codes', { skip: !process.env.TEST_DATABASE_URL && 'PostgreSQL only (the embedded test database lives in memory)' }, async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'migrate-files-cli-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user();
  t.equal((await sendFiles(s, alice, 'POST', '/user_uploads', [{ field: 'file', data: Buffer.from('to disk') }])).status, 200);
  const cli = (...args: string[]) => spawnSync(process.execPath, [...entryPointArgs('src/cli/main'), 'migrate-files', ...args], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: s.platform.config.databaseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  const run = cli('--from', 'postgres', '--to', 'local');
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /migrate-files postgres -> local: 1 copied \(\d+ bytes\), 0 already there, 0 missing, 0 mismatched/);
  t.match(cli('--from', 'postgres', '--to', 'local').stdout, /0 copied \(0 bytes\), 1 already there/, 'again: nothing to copy');
  const same = cli('--from', 'local', '--to', 'local');
  t.not(same.status, 0, 'the same store twice is refused');
  t.match(same.stderr, /same store/);
  t.not(cli('--from', 'disk', '--to', 'local').status, 0, 'an unknown store is refused');
});
