import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { makeChannel } from './drafts-helpers.js';
import { cleanupAttachments } from '../../src/services/attachments.js';
import { storageFor, uploadSettingsFromEnv } from '../../src/storage/index.js';

function multipart(files: Array<{ field: string; filename: string; type: string; data: Buffer }>, fields: Record<string, string> = {}) {
  const boundary = `----test${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const f of files) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`));
    chunks.push(f.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload(s: TestServer, as: TestUser | null, files: Parameters<typeof multipart>[0]) {
  const { payload, contentType } = multipart(files);
  const headers: Record<string, string> = { 'content-type': contentType };
  if (as) headers.authorization = as.auth;
  const r = await s.fastify.inject({ method: 'POST', url: '/api/v1/user_uploads', headers, payload });
  return { status: r.statusCode, body: r.json() };
}

async function download(s: TestServer, as: TestUser | null, url: string) {
  const r = await s.fastify.inject({ method: 'GET', url, headers: as ? { authorization: as.auth } : {} });
  return { status: r.statusCode, body: r.rawPayload, headers: r.headers };
}

const file = (filename: string, text: string, type = 'text/plain') => ({ field: 'file', filename, type, data: Buffer.from(text) });

t.test('attachments: upload, download, list, link to messages, delete', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'uploads-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id, bob.id] });

  const up = await upload(s, alice, [file('my notes.txt', 'hello world')]);
  t.equal(up.status, 200, JSON.stringify(up.body));
  t.match(up.body, { result: 'success', filename: 'my-notes.txt', url: /^\/user_uploads\/1\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/my-notes\.txt$/ });
  t.equal(up.body.uri, up.body.url);
  const pathId = up.body.url.replace('/user_uploads/', '');
  t.ok(existsSync(path.join(dataDir, 'uploads', pathId)), 'stored under DATA_DIR/uploads');

  const got = await download(s, alice, up.body.url);
  t.equal(got.status, 200);
  t.equal(got.body.toString(), 'hello world');
  t.match(got.headers, { 'content-type': /^text\/plain/, 'x-content-type-options': 'nosniff' });
  t.equal((await download(s, null, up.body.url)).status, 401, 'download needs authentication');
  t.equal((await download(s, bob, up.body.url)).status, 404, 'not linked anywhere bob can read: not found');
  t.equal((await download(s, alice, '/user_uploads/1/00/aaaaaaaaaaaaaaaaaaaaaaaa/none.txt')).status, 404);

  const html = await upload(s, alice, [file('page.html', '<script>alert(1)</script>', 'text/html')]);
  const risky = await download(s, alice, html.body.url);
  t.equal(risky.headers['content-type'], 'application/octet-stream', 'active content is never served as such');
  t.match(risky.headers['content-disposition'], /^attachment;/);

  let list = await s.api('GET', '/attachments', alice);
  t.equal(list.status, 200);
  t.equal(list.body.upload_space_used, 11 + 25);
  const first = list.body.attachments.find((a: any) => a.path_id === pathId);
  t.match(first, { name: 'my-notes.txt', path_id: pathId, size: 11, messages: [] });
  t.type(first.create_time, 'number');
  t.same((await s.api('GET', '/attachments', bob)).body.attachments, [], 'only your own uploads');

  // A message linking the file: listed with it, and bob (a recipient) may download it.
  const sent = await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 'files', content: `see [notes](${up.body.url})` });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  list = await s.api('GET', '/attachments', alice);
  t.match(list.body.attachments.find((a: any) => a.id === first.id).messages, [{ id: sent.body.id, date_sent: Number }]);
  t.equal((await download(s, bob, up.body.url)).status, 200, 'recipients may download');
  t.equal((await download(s, carol, up.body.url)).status, 200, 'so may anyone who can read the public channel');

  // Deletion: only by the owner.
  const foreign = await s.api('DELETE', `/attachments/${first.id}`, bob);
  t.equal(foreign.status, 400);
  t.same(foreign.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid attachment' });
  t.equal((await s.api('DELETE', '/attachments/999999', alice)).body.msg, 'Invalid attachment');
  const unauth = await s.api('DELETE', `/attachments/${first.id}`, null);
  t.equal(unauth.status, 401);
  t.equal(unauth.body.msg, 'Not logged in: API authentication or user session required');
  const htmlId = (await s.api('GET', '/attachments', alice)).body.attachments.find((a: any) => a.name === 'page.html').id;
  t.equal((await s.api('DELETE', `/attachments/${htmlId}`, alice)).status, 200);
  t.equal((await download(s, alice, html.body.url)).status, 404);
  t.notOk(existsSync(path.join(dataDir, 'uploads', html.body.url.replace('/user_uploads/', ''))), 'bytes removed');
  t.equal((await s.api('GET', '/attachments', alice)).body.upload_space_used, 11);

  // Upload errors.
  t.equal((await upload(s, alice, [])).body.msg, 'You must specify a file to upload');
  t.equal((await upload(s, alice, [file('a.txt', 'a'), { ...file('b.txt', 'b'), field: 'other' }])).body.msg, 'You may only upload one file at a time');
  t.equal((await upload(s, null, [file('a.txt', 'a')])).status, 401);
});

t.test('attachments: scheduled cleanup of orphaned and unused files', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'uploads-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id, s.owner.id] });
  const storage = storageFor(s.platform);
  const settings = uploadSettingsFromEnv({});
  t.equal(settings.unusedRetentionMs, 21 * 24 * 3600 * 1000, 'three weeks by default');
  t.equal(uploadSettingsFromEnv({ UNUSED_UPLOAD_RETENTION_DAYS: '2' }).unusedRetentionMs, 2 * 24 * 3600 * 1000, 'configurable');

  const used = (await upload(s, alice, [file('used.txt', 'used')])).body.url;
  const unused = (await upload(s, alice, [file('unused.txt', 'unused')])).body.url;
  const sent = await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: `[f](${used})` });
  t.equal(sent.status, 200);
  const reg = await s.api('POST', '/register', alice, { event_types: ['attachment'] });

  t.equal(await cleanupAttachments(s.platform, storage, settings, new Date()), 0, 'nothing is due yet');
  const later = new Date(Date.now() + 22 * 24 * 3600 * 1000);
  t.equal(await cleanupAttachments(s.platform, storage, settings, later), 1, 'the never-used file goes after the retention period');
  const names = (await s.api('GET', '/attachments', alice)).body.attachments.map((a: any) => a.name);
  t.same(names, ['used.txt'], 'a file used in a message stays');

  // Deleting the last message linking it: the file leaves the owner's list and the realm's used
  // space at once (the real server archives it with the message), nobody may fetch or delete it,
  // and the next run deletes its bytes.
  const usedId = (await s.api('GET', '/attachments', alice)).body.attachments[0].id;
  t.equal((await s.api('GET', '/attachments', alice)).body.upload_space_used, 4);
  t.equal((await s.api('DELETE', `/messages/${sent.body.id}`, s.owner)).status, 200);
  t.same((await s.api('GET', '/attachments', alice)).body, { result: 'success', msg: '', attachments: [], upload_space_used: 0 });
  t.equal((await download(s, alice, used)).status, 404, 'not even its uploader fetches it');
  const again = await s.api('DELETE', `/attachments/${usedId}`, alice);
  t.same([again.status, again.body.msg], [400, 'Invalid attachment']);
  t.equal(await cleanupAttachments(s.platform, storage, settings, new Date()), 1);
  t.same((await s.api('GET', '/attachments', alice)).body.attachments, []);
  t.notOk(existsSync(path.join(dataDir, 'uploads', used.replace('/user_uploads/', ''))));
  t.notOk(existsSync(path.join(dataDir, 'uploads', unused.replace('/user_uploads/', ''))));
  const reasons = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'AttachmentDeleted').execute();
  t.same(reasons.map((r) => (r.data as any).reason).sort(), ['unlinked', 'unused'], 'both deletions are in the log');

  const polled = await s.api('GET', '/events', alice, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
  t.same(polled.body.events.filter((e: any) => e.type !== 'heartbeat'), [], 'the cleanup deletes silently, as on the real server');
});

t.test('attachment events', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'uploads-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: ['attachment'] };
  let url = '';
  const added = await verifyAction(t, s, alice, async () => {
    url = (await upload(s, alice, [file('x.txt', 'abc')])).body.url;
  }, { register });
  t.match(added, [{ type: 'attachment', op: 'add', attachment: { name: 'x.txt', size: 3, path_id: url.replace('/user_uploads/', ''), messages: [] }, upload_space_used: 3 }]);
  t.same(await verifyAction(t, s, bob, () => upload(s, alice, [file('y.txt', 'y')]), { register }), [], 'only the uploader is told');
  const id = (await s.api('GET', '/attachments', alice)).body.attachments.find((a: any) => a.name === 'x.txt').id;
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id, bob.id] });
  let messageId = 0;
  const linked = await verifyAction(t, s, alice, async () => {
    messageId = (await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: `[x](${url})` })).body.id;
  }, { register });
  t.match(linked, [{ type: 'attachment', op: 'update', attachment: { id, messages: [{ id: messageId }] } }], 'a message linking the file updates it for its owner');
  const removed = await verifyAction(t, s, alice, () => s.api('DELETE', `/attachments/${id}`, alice), { register });
  t.match(removed, [{ type: 'attachment', op: 'remove', attachment: { id }, upload_space_used: 1 }]);
});

t.test('attachment update events: to the sender claiming, on an edit only for newly linked files', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'uploads-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local' });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: ['attachment'] };
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id, bob.id] });
  const a = (await upload(s, alice, [file('a.txt', 'aaa')])).body.url as string;
  const b = (await upload(s, alice, [file('b.txt', 'bb')])).body.url as string;
  const idOf = async (name: string) => (await s.api('GET', '/attachments', alice)).body.attachments.find((x: any) => x.name === name).id;
  const [aId, bId] = [await idOf('a.txt'), await idOf('b.txt')];

  let m = 0;
  const sent = await verifyAction(t, s, alice, async () => {
    m = (await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: `[a](${a})` })).body.id;
  }, { register });
  t.match(sent, [{ type: 'attachment', op: 'update', attachment: { id: aId, name: 'a.txt', messages: [{ id: m }] }, upload_space_used: 5 }]);

  t.same(await verifyAction(t, s, alice, () => s.api('PATCH', `/messages/${m}`, alice, { content: `[a again](${a})` }), { register }), [],
    'an edit linking the same files announces nothing');
  const edited = await verifyAction(t, s, alice, () => s.api('PATCH', `/messages/${m}`, alice, { content: `[a](${a}) [b](${b})` }), { register });
  t.match(edited, [{ type: 'attachment', op: 'update', attachment: { id: bId, messages: [{ id: m }] } }], 'only the newly linked file');
  t.equal(edited.length, 1);
  t.same(await verifyAction(t, s, alice, () => s.api('PATCH', `/messages/${m}`, alice, { content: 'no files' }), { register }), [],
    'unlinking announces nothing');
  const listed = (await s.api('GET', '/attachments', alice)).body.attachments;
  t.same(listed.map((x: any) => [x.name, x.messages]), [['b.txt', []], ['a.txt', []]], 'an edit that unlinks a file leaves it listed, unused');

  // Bob may read Alice's file (a message links it), so his message claims it: he hears, she does not.
  await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: `[a](${a})` });
  const [forBob, forAlice] = await Promise.all([bob, alice].map(async (u) => ({ u, reg: await s.api('POST', '/register', u, register) })));
  const relay = (await s.api('POST', '/messages', bob, { type: 'stream', to: channel, topic: 't', content: `see [a](${a})` })).body.id;
  const poll = async ({ u, reg }: { u: TestUser; reg: { body: Record<string, any> } }) =>
    ((await s.api('GET', '/events', u, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true })).body.events as any[]).filter((e) => e.type !== 'heartbeat');
  t.match(await poll(forBob!), [{ type: 'attachment', op: 'update', attachment: { id: aId, messages: [{}, { id: relay }] } }]);
  t.same(await poll(forAlice!), []);
});
