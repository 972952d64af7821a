import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { exportContains, filesContaining, natsMessagesContaining, tablesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { SHREDDED } from '../../src/eventstore/crypto/index.js';
import { shredDueDeletions } from '../../src/services/forgetting.js';
import { applyRetention } from '../../src/services/retention.js';
import { getDefaultRealm } from '../../src/read/realm.js';
import { createPlatform } from '../../src/platform.js';
import { parseReplayPoint, replayInto, targetConfig } from '../../src/cli/replay.js';
import { testConfig } from '../helpers/config.js';
import { verifyAction } from '../helpers/verify-action.js';

// Lower case: a user's address is made from their name, so one marker covers both.
const marker = uniqueMarker;

async function uploadText(s: TestServer, as: TestUser, text: string): Promise<string> {
  const boundary = `----erase${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`),
    Buffer.from(text),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await s.fastify.inject({ method: 'POST', url: '/api/v1/user_uploads', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: as.auth }, payload });
  return (r.json() as { url: string }).url;
}

async function download(s: TestServer, as: TestUser, url: string) {
  const r = await s.fastify.inject({ method: 'GET', url, headers: { authorization: as.auth } });
  return { status: r.statusCode, body: r.body };
}

/** Everywhere a forgotten marker could remain: every table, an export and its key file, the uploads directory, the NATS stream. */
async function whereFound(t: Test, s: TestServer, dataDir: string, markers: readonly string[]): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  for (const m of markers) {
    const places = [...(await tablesContaining(s.platform.db, m)).map((table) => `table ${table}`), ...filesContaining(path.join(dataDir, 'uploads'), m).map((f) => `upload ${f}`)];
    if (s.platform.config.natsUrl) {
      const head = (await s.platform.store.head()).position;
      for (let i = 0; i < 100 && ((await s.platform.bus.lastPublishedPosition()) ?? 0) < head; i += 1) await new Promise((r) => setTimeout(r, 50));
      t.ok(((await s.platform.bus.lastPublishedPosition()) ?? 0) >= head, 'the NATS stream holds the whole log');
      places.push(...(await natsMessagesContaining(s.platform.config.natsUrl, s.platform.config.natsStream, m)).map((seq) => `nats ${seq}`));
    }
    const exported = await exportContains(s.platform.db, [m]);
    if (exported.export.length > 0) places.push('export');
    if (exported.keys.length > 0) places.push('export keys');
    if (places.length > 0) found[m] = places;
  }
  return found;
}

async function server(t: Test, overrides: Record<string, unknown> = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'erase-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, fileStorage: 'local', forgettingIntervalSeconds: 0, ...overrides });
  return { s, dataDir };
}

t.test('erase-user: identity, status, uploads and messages are forgotten everywhere; held channels keep theirs; verify and audit stay', async (t) => {
  const { s, dataDir } = await server(t);
  const name = marker();
  const status = marker();
  const fileText = marker();
  const said = marker();
  const heldText = marker();
  const profile = marker();
  const alice = await s.user(Role.MEMBER, name);
  const bob = await s.user(Role.MEMBER, 'Bob');
  const field = (await s.api('POST', '/realm/profile_fields', s.owner, { name: 'Team', field_type: 1 })).body.id as number;
  t.equal((await s.api('PATCH', '/users/me/profile_data', alice, { data: [{ id: field, value: profile }] })).status, 200);
  t.equal((await s.api('POST', '/users/me/status', alice, { status_text: status })).status, 200);
  const url = await uploadText(s, alice, `secret ${fileText}`);
  t.same(filesContaining(path.join(dataDir, 'uploads'), fileText), [], 'the upload is sealed at rest');
  t.match((await download(s, alice, url)).body, fileText, 'and decrypted on download');
  const open = await createChannel(s, alice, 'open', [bob]);
  const held = await createChannel(s, alice, 'held', [bob]);
  const mine = await sendStream(s, alice, open, 'topic', `${said} [notes](${url})`);
  const kept = await sendStream(s, alice, held, 'topic', heldText);
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'channel', id: held })).status, 200);
  // The search finds what is there: the live name in the read table, a channel name (not personal) in the log everywhere.
  const channelName = marker();
  await createChannel(s, bob, channelName, []);
  const control = await whereFound(t, s, dataDir, [name, channelName]);
  t.ok(control[name]?.includes('table users'), 'control: the live name is found in the users table');
  t.ok(control[channelName]?.includes('export'), 'control: plaintext in the log is found in an export');
  if (s.platform.config.natsUrl) t.ok(control[channelName]?.some((place) => place.startsWith('nats ')), 'control: and in the NATS stream');
  const headBefore = (await verifyChain(s.platform.db)).headHash;

  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const refused = await s.api('POST', `/users/${alice.id}/erase`, admin, { messages: 'shred' });
  t.equal(refused.status, 400);
  t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', 'owners only');

  const erased = await s.api('POST', `/users/${alice.id}/erase`, s.owner, { messages: 'shred', reason: 'GDPR request 17' });
  t.equal(erased.status, 200, JSON.stringify(erased.body));
  t.same(erased.body, { result: 'success', msg: '', user_id: alice.id, messages_shredded: 1, messages_held: 1 });

  const shown = (await s.api('GET', `/users/${alice.id}`, bob)).body.user;
  t.equal(shown.full_name, `Deleted User ${alice.id}`, "the real server's deleted user");
  t.equal(shown.email, `deleteduser${alice.id}@${new URL(s.platform.config.externalUrl).hostname}`);
  t.equal(shown.is_active, false);
  t.equal((await s.api('GET', `/messages/${mine}`, bob)).status, 400, 'their message is gone');
  const keptMessage = (await s.api('GET', `/messages/${kept}`, bob)).body.message;
  t.match(keptMessage.content, heldText, 'a message in a held channel is kept');
  t.equal(keptMessage.sender_full_name, `Deleted User ${alice.id}`);
  t.equal((await download(s, bob, url)).status, 404, 'the upload is gone');

  t.same(await whereFound(t, s, dataDir, [name, status, fileText, said, profile]), {}, 'no marker anywhere');
  t.ok((await tablesContaining(s.platform.db, heldText)).includes('messages'), 'the held message is still served');
  const report = await verifyChain(s.platform.db, { expectedHead: headBefore });
  t.ok(report.ok, 'verify and verify --head pass');

  const audit = await s.api('GET', '/audit/events', s.owner, { user_id: alice.id });
  const types = audit.body.events.map((e: any) => e.type);
  t.ok(types.includes('UserCreated') && types.at(-1) === 'UserErased', 'the audit lists the person\'s events and the erasure');
  const created = audit.body.events.find((e: any) => e.type === 'UserCreated');
  t.equal(created.data.full_name, SHREDDED, 'that there was a name, not the name');
  const erasure = audit.body.events.at(-1);
  t.equal(erasure.metadata.actor_id, s.owner.id, 'who');
  t.equal(erasure.data.reason, 'GDPR request 17', 'why');
  t.same(erasure.data.key_ids, [`user:${alice.id}`], 'which key');

  const before = await tableChecksums(s.platform.db, allProjections.flatMap((p) => p.tables));
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, allProjections.flatMap((p) => p.tables)), before, 'rebuild checksums match');

  const again = await s.api('POST', `/users/${alice.id}/erase`, s.owner, {});
  t.equal(again.status, 400, 'erasing twice is refused');
});

t.test('erase-user refusals: the only owner, a person on legal hold, no such user; messages kept by default', async (t) => {
  const { s } = await server(t);
  const last = await s.api('POST', `/users/${s.owner.id}/erase`, s.owner, {});
  t.equal(last.status, 400);
  t.equal(last.body.msg, 'Cannot deactivate the only organization owner');
  const carol = await s.user(Role.MEMBER, 'Carol');
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'user', id: carol.id })).status, 200);
  const held = await s.api('POST', `/users/${carol.id}/erase`, s.owner, {});
  t.equal(held.status, 400);
  t.match(held.body.msg, /legal hold/);
  t.equal((await s.api('POST', '/users/999999/erase', s.owner, {})).body.msg, 'No such user');
  t.equal((await s.api('POST', `/users/${carol.id}/erase`, s.owner, { messages: 'maybe' })).status, 400, 'bad option');
  t.equal((await s.api('DELETE', '/legal_holds', s.owner, { scope: 'user', id: carol.id })).status, 200);
  const sid = await createChannel(s, carol, 'kept', []);
  const text = marker();
  const id = await sendStream(s, carol, sid, 'topic', text);
  const done = await s.api('POST', `/users/${carol.id}/erase`, s.owner, {});
  t.equal(done.status, 200);
  t.equal(done.body.messages_shredded, 0);
  t.match((await s.api('GET', `/messages/${id}`, s.owner)).body.message.content, text, 'messages kept by default');
  t.equal((await s.api('GET', '/users/me', carol)).status, 401, 'the erased account cannot sign in');
});

t.test('every way to forget leaves the marker nowhere: deletion after grace, purge, retention, erasure', async (t) => {
  const { s, dataDir } = await server(t, { deletedMessageShredDays: 30 });
  const realm = (await getDefaultRealm(s.platform.db))!;
  const dave = await s.user(Role.MEMBER, 'Dave');
  const sid = await createChannel(s, dave, 'ways', []);
  const graceText = marker();
  const purgeText = marker();
  const oldText = marker();
  const graceId = await sendStream(s, dave, sid, graceText, graceText);
  const purgeId = await sendStream(s, dave, sid, 'topic', purgeText);
  const oldId = await sendStream(s, dave, sid, 'old', oldText);
  t.equal((await s.api('DELETE', `/messages/${graceId}`, dave)).status, 200);
  t.same(Object.keys(await whereFound(t, s, dataDir, [graceText])), [], 'sealed in the log; gone from the read tables');
  t.ok((await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${graceId}`).executeTakeFirst()), 'the key waits for the grace period');
  t.equal(await shredDueDeletions(s.platform, realm, new Date(Date.now() + 31 * 86_400_000), 30), 1, 'shredded after the grace period');
  t.equal((await s.api('DELETE', `/messages/${purgeId}`, s.owner, { purge: true })).status, 200);
  t.equal((await s.api('PATCH', `/streams/${sid}`, s.owner, { message_retention_days: JSON.stringify(1) })).status, 200);
  t.equal(await applyRetention(s.platform, (await getDefaultRealm(s.platform.db))!, new Date(Date.now() + 2 * 86_400_000)), 1, 'retention shreds the old message');
  t.equal((await s.api('GET', `/messages/${oldId}`, dave)).status, 400);
  t.same(await whereFound(t, s, dataDir, [graceText, purgeText, oldText]), {}, 'no marker anywhere');
  const life = await s.api('GET', `/audit/messages/${oldId}`, s.owner);
  t.equal(life.body.shredded, true, 'the audit still lists the message and its shredding');
  t.equal(life.body.events.at(-1).data.reason, 'retention');
  t.ok((await verifyChain(s.platform.db)).ok);
  t.ok(existsSync(dataDir));
});

t.test('another replica forgets a destroyed key without being the one that shredded', { skip: !process.env.TEST_DATABASE_URL && 'replicas share a PostgreSQL database' }, async (t) => {
  const { s } = await server(t);
  // A second server process on the same database and stream: its projections wait behind the first's locks.
  const replica = await createPlatform(s.platform.config, { projections: allProjections });
  t.teardown(() => replica.close());
  const erin = await s.user(Role.MEMBER, 'Erin');
  const sid = await createChannel(s, erin, 'replicated', []);
  const text = marker();
  const id = await sendStream(s, erin, sid, 'topic', text);
  const contentOn = async () => (await replica.store.readStream(`message-${id}`))[0]!.data.content;
  t.equal(await contentOn(), text, 'the replica opened the message (its key is now cached there)');
  t.equal((await s.api('DELETE', `/messages/${id}`, s.owner, { purge: true })).status, 200);
  let seen: unknown = text;
  for (let i = 0; i < 100 && seen !== SHREDDED; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = await contentOn();
  }
  t.equal(seen, SHREDDED, 'the replica evicted the key it had cached');
});

t.test('replay --until before the erasure: the person is shredded in the past too', async (t) => {
  const { s, dataDir } = await server(t);
  const name = marker();
  const frank = await s.user(Role.MEMBER, name);
  const head = (await s.platform.store.head()).position;
  t.equal((await s.api('POST', `/users/${frank.id}/erase`, s.owner, {})).status, 200);
  const target = targetConfig(await testConfig(), path.join(dataDir, 'past'));
  await replayInto(s.platform.db, target, allProjections, parseReplayPoint(String(head)), () => {});
  const past = await createPlatform({ ...target, natsUrl: undefined }, { projections: allProjections, startWorkers: false });
  try {
    const row = await past.db.selectFrom('users').selectAll().where('id', '=', frank.id).executeTakeFirstOrThrow();
    t.equal(row.full_name, SHREDDED, 'the name before the erasure reads as shredded');
    t.equal(row.is_active, true, 'the rest of that past stays as it was');
    t.same(await tablesContaining(past.db, name), [], 'the replayed database holds no trace of the name');
  } finally {
    await past.close();
  }
});

t.test('event queues: the erasure reaches clients as realm_user updates that make a fresh /register', async (t) => {
  const { s } = await server(t);
  const gina = await s.user(Role.MEMBER, 'Gina');
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  await verifyAction(t, s, watcher, () => s.api('POST', `/users/${gina.id}/erase`, s.owner, {}), {
    register: { event_types: ['realm_user'], fetch_event_types: ['realm_user'] },
    expect: (events) => t.ok(events.some((e) => e.type === 'realm_user' && e.person.full_name === `Deleted User ${gina.id}`)),
  });
});
