import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from '../helpers/server.js';
import { LocalDiskStorage } from '../../src/storage/index.js';
import { SealedUploadStorage, isSealedUpload, uploadKeyId } from '../../src/services/upload-crypto.js';

const pathId = (name: string) => `1/ab/${'x'.repeat(20)}${name.padStart(4, '0').slice(-4)}/file.txt`;

t.test('uploads are sealed under a key of their own; plaintext files from before still read; a moved or shredded file reads as none', async (t) => {
  const s = await startTestServer(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'upload-crypto-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const plain = new LocalDiskStorage(dir);
  const sealed = new SealedUploadStorage(plain, s.platform.store.crypto!.keys);

  await plain.save(pathId('old'), Buffer.from('written before encryption'));
  t.equal((await sealed.read(pathId('old')))?.toString(), 'written before encryption', 'a plaintext file is served as it is');

  await sealed.save(pathId('new'), Buffer.from('secret bytes'), 'text/plain');
  const stored = (await plain.read(pathId('new')))!;
  t.ok(isSealedUpload(stored), 'stored sealed');
  t.notOk(stored.includes(Buffer.from('secret bytes')), 'no plaintext at rest');
  t.equal((await sealed.read(pathId('new')))?.toString(), 'secret bytes', 'decrypted on read');
  t.ok(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', uploadKeyId(pathId('new'))).executeTakeFirst(), 'its own key');

  await sealed.save(pathId('other'), Buffer.from('other'), 'text/plain');
  await plain.save(pathId('other'), stored);
  t.equal(await sealed.read(pathId('other')), null, "one file's bytes are not served as another's");

  await sealed.remove(pathId('new'));
  t.equal(await sealed.read(pathId('new')), null);
  t.equal(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', uploadKeyId(pathId('new'))).executeTakeFirst(), undefined, 'key destroyed with the file');
  await plain.save(pathId('new'), stored);
  t.equal(await sealed.read(pathId('new')), null, 'a copy of the bytes (a backup) is unreadable once the key is gone');
});
