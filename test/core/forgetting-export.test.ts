import t from 'tap';
import { uniqueMarker } from '../helpers/marker-search.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { testConfig } from '../helpers/config.js';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { exportCommand, importCommand, verifyCommand } from '../../src/cli/commands.js';
import { createPlatform } from '../../src/platform.js';
import { SHREDDED } from '../../src/eventstore/crypto/index.js';
import { Role } from '../../src/domain/roles.js';

const marker = uniqueMarker;

t.test('export carries ciphertext and only surviving keys; import takes keys only when given', { skip: !!process.env.TEST_DATABASE_URL && 'embedded data directories only' }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'forget-export-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = { ...(await testConfig()), dataDir: path.join(dir, 'source'), deletedMessageShredDays: 0, forgettingIntervalSeconds: 0 };
  const server = await buildServer(config, { projections: allProjections });
  const owner = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const auth = basicAuth(owner.delivery_email, owner.api_key);
  const call = async (method: 'POST' | 'DELETE', url: string, params: Record<string, unknown>) =>
    (await server.fastify.inject({ method, url: `/api/v1${url}`, headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: encodeParams(params) })).json();
  await call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'export' }] });
  const forgotten = marker();
  const kept = marker();
  const gone = await call('POST', '/messages', { type: 'stream', to: 'export', topic: 't', content: forgotten });
  const stays = await call('POST', '/messages', { type: 'stream', to: 'export', topic: 't', content: kept });
  t.equal((await call('DELETE', `/messages/${gone.id}`, {})).result, 'success');
  await server.close();

  const file = path.join(dir, 'log.jsonl');
  await exportCommand(config, allProjections, () => {}, file);
  const exported = readFileSync(file, 'utf8');
  const keys = readFileSync(`${file}.keys`, 'utf8');
  t.notOk(exported.includes(forgotten), 'the forgotten text is not in the export');
  t.notOk(exported.includes(kept), 'live text is exported as ciphertext too');
  t.notOk(keys.includes(`"message:${gone.id}"`), 'the destroyed key is not exported');
  t.ok(keys.includes(`"message:${stays.id}"`), 'the surviving key is');
  t.ok(await verifyCommand(config, allProjections, () => {}), 'verify passes after shredding');

  // Same KEK (the source's secret file), two new databases: without and with the key file.
  const secret = readFileSync(path.join(config.dataDir, 'data-key-secret'), 'utf8');
  const contentOf = async (target: typeof config) => {
    const p = await createPlatform(target, { projections: allProjections, startWorkers: false });
    try {
      return (await p.db.selectFrom('messages').select('content').where('id', '=', stays.id).executeTakeFirst())?.content;
    } finally {
      await p.close();
    }
  };
  const bare = { ...config, dataDir: path.join(dir, 'bare'), dataKeySecret: secret };
  await importCommand(bare, allProjections, () => {}, file);
  t.equal(await contentOf(bare), SHREDDED, 'without --keys nothing sealed comes back');
  const withKeys = { ...config, dataDir: path.join(dir, 'with-keys'), dataKeySecret: secret };
  await importCommand(withKeys, allProjections, () => {}, file, `${file}.keys`);
  t.match(await contentOf(withKeys), kept, 'with --keys the surviving messages read again');
});
