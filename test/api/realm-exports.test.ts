import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { testConfig } from '../helpers/config.js';
import { importCommand, verifyCommand } from '../../src/cli/commands.js';
import { allProjections } from '../../projections/index.js';
import { randomUUID } from 'node:crypto';
import { requestRealmExport, resumePendingExports, runRealmExport } from '../../src/services/realm-exports.js';
import type { FileStorage } from '../../src/storage/index.js';
import { uploadStorage } from '../../src/services/upload-crypto.js';

async function finished(s: TestServer, id: number): Promise<Record<string, any>> {
  for (let i = 0; i < 200; i++) {
    const list = await s.api('GET', '/export/realm', s.owner);
    const row = list.body.exports.find((e: any) => e.id === id);
    if (row && !row.pending) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`export ${id} did not finish`);
}

async function download(s: TestServer, who: TestUser, url: string) {
  const r = await s.fastify.inject({ method: 'GET', url: new URL(url).pathname, headers: { authorization: who.auth } });
  return { status: r.statusCode, body: r.rawPayload };
}

t.test('members and administrators are refused, with the real server\'s errors', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  for (const [method, url] of [['POST', '/export/realm'], ['GET', '/export/realm'], ['DELETE', '/export/realm/1']] as const) {
    const m = await s.api(method, url, member);
    t.same([m.status, m.body.code, m.body.msg], [400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'], `${method} ${url} member`);
    const a = await s.api(method, url, admin);
    t.same([a.status, a.body.code, a.body.msg], [400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner'], `${method} ${url} admin`);
  }
  t.same((await s.api('GET', '/export/realm', s.owner)).body.exports, [], 'nothing was exported');
});

t.test('owner flow: request, background export, events, download by owners only, import and verify, delete twice', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const coOwner = await s.user(Role.OWNER, 'Second owner');
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'exported' }] });
  await s.api('POST', '/messages', member, { type: 'stream', to: 'exported', topic: 't', content: 'in the export' });

  const adminQueue = await s.api('POST', '/register', admin, {});
  let id = 0;
  const events = await verifyAction(t, s, coOwner, async () => {
    const r = await s.api('POST', '/export/realm', s.owner);
    t.same([r.status, r.body.result, typeof r.body.id], [200, 'success', 'number']);
    id = r.body.id;
    await finished(s, id);
  });
  const exportEvents = events.filter((e) => e.type === 'realm_export');
  t.ok(exportEvents.length >= 1, 'a realm_export event reaches the other owner');
  const list = (await s.api('GET', '/export/realm', s.owner)).body.exports;
  t.same(exportEvents.at(-1)!.exports, list, 'the last event carries the list GET /export/realm answers');
  t.equal(list.length, 1);
  const row = list[0];
  t.match(row, { id, acting_user_id: s.owner.id, pending: false, failed_timestamp: null, deleted_timestamp: null, export_url: /\/user_uploads\/1\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/zulip-export-\d+\.jsonl$/ });
  t.ok(Math.abs(row.export_time - Date.now() / 1000) < 60, 'export_time is UNIX seconds');
  const polled = await s.api('GET', '/events', admin, { queue_id: adminQueue.body.queue_id, last_event_id: adminQueue.body.last_event_id, dont_block: true });
  t.notOk(polled.body.events.some((e: any) => e.type === 'realm_export'), 'administrators are not told');

  // Only owners download; the files are the CLI export's: the log, its keys and its signatures.
  for (const who of [admin, member]) t.equal((await download(s, who, row.export_url)).status, 404, 'not for non-owners');
  const log = await download(s, coOwner, row.export_url);
  t.equal(log.status, 200);
  t.ok(log.body.length > 0);
  const keys = await download(s, s.owner, `${row.export_url}.keys`);
  const signatures = await download(s, s.owner, `${row.export_url}.signatures`);
  t.same([keys.status, signatures.status], [200, 200]);

  // The file imports into a fresh database, which verifies.
  const dir = mkdtempSync(path.join(tmpdir(), 'realm-export-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'export.jsonl');
  writeFileSync(file, log.body);
  writeFileSync(`${file}.signatures`, signatures.body);
  const target = { ...(await testConfig()), dataDir: path.join(dir, 'target') };
  const imported = await importCommand(target, allProjections, () => {}, file);
  t.equal(imported, log.body.toString('utf8').trim().split('\n').length, 'every exported event is imported');
  t.ok(await verifyCommand(target, allProjections, () => {}), 'the imported log verifies');

  // Deleting marks it deleted and removes the files; a second delete gets the real server's error.
  await verifyAction(t, s, coOwner, async () => {
    const del = await s.api('DELETE', `/export/realm/${id}`, s.owner);
    t.same([del.status, del.body.result], [200, 'success']);
  });
  const after = (await s.api('GET', '/export/realm', s.owner)).body.exports[0];
  t.match(after, { id, export_url: null, pending: false });
  t.type(after.deleted_timestamp, 'number');
  t.equal((await download(s, s.owner, row.export_url)).status, 404, 'the file is gone');
  t.equal(await uploadStorage(s.platform).read(new URL(row.export_url).pathname.replace('/user_uploads/', '')), null, 'removed from storage');
  const twice = await s.api('DELETE', `/export/realm/${id}`, s.owner);
  t.same([twice.status, twice.body.code, twice.body.msg], [400, 'BAD_REQUEST', 'Export already deleted']);
  const unknown = await s.api('DELETE', '/export/realm/987654', s.owner);
  t.same([unknown.status, unknown.body.msg], [400, 'Invalid data export ID']);
  const notNumber = await s.api('DELETE', '/export/realm/abc', s.owner);
  t.equal(notNumber.status, 404, 'an integer in the path takes digits only: no route');
});

t.test('the rate limit: five exports in seven days', async (t) => {
  const s = await startTestServer(t);
  for (let i = 0; i < 5; i++) {
    const r = await s.api('POST', '/export/realm', s.owner);
    t.equal(r.status, 200);
    await finished(s, r.body.id);
  }
  const sixth = await s.api('POST', '/export/realm', s.owner);
  t.same([sixth.status, sixth.body.code, sixth.body.msg], [400, 'BAD_REQUEST', 'Exceeded rate limit.']);
});

t.test('a second run of a finished export (another process, a restart) changes nothing', async (t) => {
  const s = await startTestServer(t);
  const r = await s.api('POST', '/export/realm', s.owner);
  const first = await finished(s, r.body.id);
  t.equal(await runRealmExport(s.platform, uploadStorage(s.platform), 1, r.body.id), 'not-pending');
  t.same((await s.api('GET', '/export/realm', s.owner)).body.exports[0], first);
});

t.test('an export cut off by a restart runs again; a failed one is reported and cannot be deleted', async (t) => {
  const s = await startTestServer(t);
  const meta = () => ({ actorId: s.owner.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() });
  // Requested, but the process that would have run it is gone: it stays pending, and cannot be deleted yet.
  const cut = await requestRealmExport(s.platform, meta(), s.owner.id);
  t.match((await s.api('GET', '/export/realm', s.owner)).body.exports, [{ id: cut, pending: true, export_url: null }]);
  const early = await s.api('DELETE', `/export/realm/${cut}`, s.owner);
  t.same([early.status, early.body.msg], [400, 'Export still in progress']);
  const errors: unknown[] = [];
  await resumePendingExports(s.platform, uploadStorage(s.platform), (error) => errors.push(error));
  t.same(errors, []);
  t.match((await s.api('GET', '/export/realm', s.owner)).body.exports, [{ id: cut, pending: false, failed_timestamp: null, export_url: /zulip-export/ }]);

  // Storage that refuses the bytes: the export fails, with a realm_export event, and has nothing to delete.
  const failing: FileStorage = { save: async () => { throw new Error('disk full'); }, read: async () => null, stream: async () => null, stat: async () => null, remove: async () => undefined };
  const broken = await requestRealmExport(s.platform, meta(), s.owner.id);
  const events = await verifyAction(t, s, s.owner, async () => {
    t.equal(await runRealmExport(s.platform, failing, 1, broken), 'failed');
  });
  t.match(events.at(-1), { type: 'realm_export', exports: [{ id: cut }, { id: broken, pending: false, export_url: null, failed_timestamp: Number }] });
  const del = await s.api('DELETE', `/export/realm/${broken}`, s.owner);
  t.same([del.status, del.body.msg], [400, 'Export failed, nothing to delete']);
});

t.test('the rate limit holds for concurrent requests: exactly five of ten are accepted', async (t) => {
  const s = await startTestServer(t);
  const answers = await Promise.all(Array.from({ length: 10 }, () => s.api('POST', '/export/realm', s.owner)));
  t.equal(answers.filter((a) => a.status === 200).length, 5, JSON.stringify(answers.map((a) => a.status)));
  t.same(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.msg]), Array.from({ length: 5 }, () => [400, 'Exceeded rate limit.']));
  for (const a of answers.filter((a) => a.status === 200)) await finished(s, a.body.id);
  t.equal((await s.api('GET', '/export/realm', s.owner)).body.exports.length, 5);
});

t.test('the export reaches the storage as a stream, never as one buffer', async (t) => {
  const s = await startTestServer(t);
  const meta = () => ({ actorId: s.owner.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() });
  const inner = uploadStorage(s.platform);
  const buffered: string[] = [];
  const streamed = new Map<string, Buffer>();
  const streaming: FileStorage = {
    save: async (pathId, data, type) => {
      if (Buffer.isBuffer(data)) {
        buffered.push(pathId);
        return inner.save(pathId, data, type);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of data) chunks.push(Buffer.from(chunk));
      streamed.set(pathId, Buffer.concat(chunks));
      await inner.save(pathId, Buffer.concat(chunks), type);
    },
    read: (pathId) => inner.read(pathId),
    stream: (pathId, range) => inner.stream(pathId, range),
    stat: (pathId) => inner.stat(pathId),
    remove: (pathId) => inner.remove(pathId),
  };
  const id = await requestRealmExport(s.platform, meta(), s.owner.id);
  t.equal(await runRealmExport(s.platform, streaming, 1, id), 'finished');
  t.same(buffered, [], 'no file was saved as one buffer');
  t.equal(streamed.size, 3, 'the log, its keys and its signatures');
  const row = await finished(s, id);
  const log = [...streamed].find(([pathId]) => pathId.endsWith('.jsonl'))!;
  t.equal(row.export_url.endsWith(log[0]), true, 'the listed file is the streamed log');
  const downloaded = await download(s, s.owner, row.export_url);
  t.equal(downloaded.status, 200);
  t.ok(downloaded.body.equals(log[1]), 'the download is what was streamed');
  t.equal((await s.platform.db.selectFrom('realm_exports').select('size').where('id', '=', id).executeTakeFirstOrThrow()).size, log[1].length, 'its size is the streamed size');
});
