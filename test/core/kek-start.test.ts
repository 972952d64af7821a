import t from 'tap';
import { mkdtempSync, rmSync, existsSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPlatform } from '../../src/platform.js';
import { allProjections } from '../../projections/index.js';
import { testConfig } from '../helpers/config.js';
import { KEK_FILE_NAME } from '../../src/eventstore/crypto/kek.js';

const start = async (config: Awaited<ReturnType<typeof testConfig>>) => {
  const platform = await createPlatform(config, { projections: allProjections, startWorkers: false });
  await platform.close();
};

t.test('the server refuses to start with a wrong or missing key-encryption key', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kek-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const base = { ...(await testConfig()), dataDir: dir, natsUrl: undefined };
  const secret = randomBytes(32).toString('hex');
  if (base.databaseUrl) {
    await t.rejects(start({ ...base, dataDir: path.join(dir, 'empty') , dataKeySecret: 'not a key' }), /DATA_KEY_SECRET must be 32 random bytes/);
    await start({ ...base, dataKeySecret: secret });
  } else {
    // Embedded: the first start generates the KEK into DATA_DIR.
    await start(base);
    t.ok(existsSync(path.join(dir, KEK_FILE_NAME)), 'generated into DATA_DIR');
    await start(base);
    t.pass('starts again with its own file');
    await t.rejects(start({ ...base, dataKeySecret: secret }), /wrong key-encryption key/, 'another secret is refused');
    unlinkSync(path.join(dir, KEK_FILE_NAME));
    await t.rejects(start(base), /key-encryption key is missing/, 'a lost KEK file is refused, not replaced');
    return;
  }
  await t.rejects(start({ ...base, dataKeySecret: randomBytes(32).toString('hex') }), /wrong key-encryption key/, 'another secret is refused');
  await start({ ...base, dataKeySecret: secret });
  t.pass('the right secret starts');
});
