import t from 'tap';
import path from 'node:path';
import { serverWithDataDir, hasDataKey } from '../helpers/forgetting-server.js';
import { Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { exportContains, filesContaining, tablesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { sendFiles } from '../helpers/upload.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { uploadKeyId, uploadStorage } from '../../src/services/upload-crypto.js';
import { EXPORT_FILE_SUFFIXES } from '../../src/read/realm-exports.js';

const marker = uniqueMarker;

/** Every table, the uploads directory and an export of the log (events and key file). */
async function whereFound(s: TestServer, dataDir: string, markers: readonly string[]): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  for (const m of markers) {
    const places = [...(await tablesContaining(s.platform.db, m)).map((table) => `table ${table}`), ...filesContaining(path.join(dataDir, 'uploads'), m).map((f) => `upload ${f}`)];
    const exported = await exportContains(s.platform.db, [m]);
    if (exported.export.length > 0) places.push('export');
    if (places.length > 0) found[m] = places;
  }
  return found;
}

async function uploadText(s: TestServer, as: TestUser, text: string): Promise<string> {
  const r = await sendFiles(s, as, 'POST', '/user_uploads', [{ field: 'file', data: Buffer.from(text) }]);
  return r.body.url as string;
}

const checksums = (s: TestServer) => tableChecksums(s.platform.db, allProjections.flatMap((p) => p.tables));

t.test('a shredded message takes the files only it linked at once; a file another message links stays', async (t) => {
  const { s, dataDir } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'files', []);
  const lone = marker();
  const shared = marker();
  const loneUrl = await uploadText(s, alice, lone);
  const sharedUrl = await uploadText(s, alice, shared);
  const first = await sendStream(s, alice, sid, 'topic', `[a](${loneUrl}) [b](${sharedUrl})`);
  await sendStream(s, alice, sid, 'topic', `again [b](${sharedUrl})`);
  const attachments = async () => (await s.platform.db.selectFrom('attachments').select('path_id').orderBy('id').execute()).map((r) => r.path_id);
  t.equal((await attachments()).length, 2);
  t.equal((await s.api('DELETE', `/messages/${first}`, s.owner, { purge: true })).status, 200);
  const left = await attachments();
  t.equal(left.length, 1, 'the file only the shredded message linked is deleted with it');
  t.ok(sharedUrl.endsWith(left[0]!), 'the other file stays');
  t.notOk(await hasDataKey(s, uploadKeyId(loneUrl.replace('/user_uploads/', ''))), 'its key is destroyed');
  t.equal((await s.fastify.inject({ method: 'GET', url: loneUrl, headers: { authorization: alice.auth } })).statusCode, 404);
  t.same(await whereFound(s, dataDir, [lone]), {});
  t.equal((await s.fastify.inject({ method: 'GET', url: sharedUrl, headers: { authorization: alice.auth } })).statusCode, 200);
  const types = (await s.platform.db.selectFrom('events').select('type').where('type', '=', 'AttachmentDeleted').execute());
  t.equal(types.length, 1, 'one AttachmentDeleted event');
});

t.test("a stored organization export loses the copies of keys destroyed after it was taken", async (t) => {
  const { s } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'exported', []);
  const gone = await sendStream(s, alice, sid, 'topic', 'to be shredded');
  const stays = await sendStream(s, alice, sid, 'topic', 'stays');
  const id = (await s.api('POST', '/export/realm', s.owner)).body.id as number;
  let row: any;
  for (let i = 0; i < 200 && !(row && !row.pending); i += 1) {
    await new Promise((r) => setTimeout(r, 50));
    row = (await s.api('GET', '/export/realm', s.owner)).body.exports.find((e: any) => e.id === id);
  }
  const stored = await s.platform.db.selectFrom('realm_exports').select('path_id').where('id', '=', id).executeTakeFirstOrThrow();
  const keyFile = `${stored.path_id!}${EXPORT_FILE_SUFFIXES[1]}`;
  const keysIn = async () => (await uploadStorage(s.platform).read(keyFile))!.toString('utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).key_id as string);
  t.ok((await keysIn()).includes(`message:${gone}`), 'the export holds the key when taken');
  t.equal((await s.api('DELETE', `/messages/${gone}`, s.owner, { purge: true })).status, 200);
  const after = await keysIn();
  t.notOk(after.includes(`message:${gone}`), 'the destroyed key is gone from the stored key file');
  t.ok(after.includes(`message:${stays}`), 'the others stay');
  const erased = await s.api('POST', `/users/${alice.id}/erase`, s.owner, {});
  t.equal(erased.status, 200);
  t.notOk((await keysIn()).includes(`user:${alice.id}`), 'an erasure prunes it too');
  const download = await s.fastify.inject({ method: 'GET', url: `${new URL(row.export_url).pathname}.keys`, headers: { authorization: s.owner.auth } });
  t.notOk(download.body.includes(`user:${alice.id}`), 'and a download serves the pruned file');
});

t.test('invitation addresses, email change requests, drafts and scheduled messages are sealed and forgotten', async (t) => {
  const { s, dataDir } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'drafty', []);
  const invited = `${marker()}@example.com`;
  const accepted = `${marker()}@example.com`;
  const newAddress = `${marker()}@example.org`;
  const draft = marker();
  const draftTopic = marker();
  const scheduled = marker();
  const delivered = marker();
  t.equal((await s.api('POST', '/invites', s.owner, { invitee_emails: `${invited}, ${accepted}`, stream_ids: [] })).status, 200);
  t.equal((await s.api('PATCH', '/settings', alice, { email: newAddress })).status, 200);
  t.equal((await s.api('POST', '/drafts', alice, { drafts: [{ type: 'stream', to: [sid], topic: draftTopic, content: draft }] })).status, 200);
  const when = Math.floor(Date.now() / 1000) + 3600;
  t.equal((await s.api('POST', '/scheduled_messages', alice, { type: 'stream', to: sid, topic: 't', content: scheduled, scheduled_delivery_timestamp: when })).status, 200);
  for (const m of [invited, accepted, newAddress, draft, draftTopic, scheduled]) {
    const found = await whereFound(s, dataDir, [m]);
    t.notOk(found[m]?.includes('export'), `${m.slice(0, 20)}: sealed in the log`);
    // The requested address is only in the log (and the mail); the others are served from their tables.
    if (m !== newAddress) t.ok(found[m]?.some((place) => place.startsWith('table ')), 'and served from its read table');
  }

  // Revoking an invitation forgets its address.
  const invites = (await s.api('GET', '/invites', s.owner)).body.invites as any[];
  const revoked = invites.find((i) => i.email === invited);
  t.equal((await s.api('DELETE', `/invites/${revoked.id}`, s.owner)).status, 200);
  t.notOk(await hasDataKey(s, `invite:${revoked.id}`), 'the invitation key is destroyed on revocation');
  const audit = await s.api('GET', '/audit/events', s.owner, { limit: 1000 });
  const sent = audit.body.events.find((e: any) => e.type === 'InvitationSent' && e.data.invite_id === revoked.id);
  t.equal(sent.data.email, '(shredded)', 'the audit shows there was an address, not the address');

  // A delivered scheduled message's own copy goes; its text lives on in the message.
  const later = await s.api('POST', '/scheduled_messages', alice, { type: 'stream', to: sid, topic: 't', content: delivered, scheduled_delivery_timestamp: when });
  const { deliverScheduledMessage } = await import('../../src/services/scheduled-messages.js');
  t.equal(await deliverScheduledMessage(s.platform, later.body.scheduled_message_id, new Date((when + 1) * 1000)), 'delivered');
  t.notOk(await hasDataKey(s, `scheduled-message:${later.body.scheduled_message_id}`), 'the scheduled copy\'s key is destroyed on delivery');
  t.same((await whereFound(s, dataDir, [delivered]))[delivered], ['table messages'], 'only the message holds the text now');

  const before = await checksums(s);
  await s.platform.projections.rebuild();
  t.same(await checksums(s), before, 'rebuild checksums match with the destroyed keys');

  t.equal((await s.api('POST', `/users/${alice.id}/erase`, s.owner, { messages: 'shred' })).status, 200);
  t.same(await whereFound(s, dataDir, [invited, newAddress, draft, draftTopic, scheduled, delivered]), {}, 'no marker anywhere after the erasure');
  t.ok((await verifyChain(s.platform.db)).ok);
  const erasedChecksums = await checksums(s);
  await s.platform.projections.rebuild();
  t.same(await checksums(s), erasedChecksums, 'rebuild checksums match after the erasure');
});

