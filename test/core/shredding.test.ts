import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { tablesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { shredDueDeletions, shredMessages, systemMeta } from '../../src/services/forgetting.js';
import { getDefaultRealm } from '../../src/read/realm.js';
import { SHREDDED } from '../../src/eventstore/crypto/index.js';

const marker = uniqueMarker;

t.test('content and topic are stored sealed; readers see them; the hash chain covers the ciphertext', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'sealed', []);
  const body = marker();
  const topic = marker();
  const id = await sendStream(s, alice, sid, topic, `hello ${body}`);
  const row = await s.platform.db.selectFrom('events').select(['data']).where('type', '=', 'MessageSent').where('stream_id', '=', `message-${id}`).executeTakeFirstOrThrow();
  const data = row.data as Record<string, any>;
  t.equal(data.content.$enc, 2, 'content is the head of the event\'s one envelope');
  t.same(data.content.paths, ['content', 'rendered_content', 'topic'], 'which holds every sealed field');
  t.same(data.topic, { $enc: 2, k: `message:${id}`, at: 'content' }, 'topic points to it');
  t.same(data.rendered_content, { $enc: 2, k: `message:${id}`, at: 'content' }, 'rendered content points to it');
  t.equal(data.content.k, `message:${id}`, 'under the message key');
  t.notOk(JSON.stringify(data).includes(body), 'no plaintext in the stored event');
  const edit = await s.api('PATCH', `/messages/${id}`, alice, { content: `edited ${body}` });
  t.equal(edit.status, 200);
  t.same(await tablesContaining(s.platform.db, body), ['messages'], 'only the read table holds the text');
  const got = await s.api('GET', `/messages/${id}`, alice);
  t.match(got.body.message.content, `edited ${body}`);
  t.equal(got.body.message.subject, topic);
  const history = await s.api('GET', `/messages/${id}/history`, alice);
  t.match(history.body.message_history[0].content, `hello ${body}`, 'the earlier version is readable from the sealed edit');
  t.ok((await verifyChain(s.platform.db)).ok);
});

t.test('DELETE with grace period 0 shreds at once: nothing of the marker remains, verify passes, audit keeps metadata', async (t) => {
  const s = await startTestServer(t, { deletedMessageShredDays: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'forget', []);
  const body = marker();
  const topic = marker();
  const id = await sendStream(s, alice, sid, topic, body);
  await s.api('PATCH', `/messages/${id}`, alice, { content: `v2 ${body}` });
  const headBefore = (await verifyChain(s.platform.db)).headHash;
  const del = await s.api('DELETE', `/messages/${id}`, alice);
  t.equal(del.status, 200);
  t.same(await tablesContaining(s.platform.db, body), [], 'content found in no table');
  t.same(await tablesContaining(s.platform.db, topic), [], 'topic found in no table');
  t.equal(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${id}`).executeTakeFirst(), undefined, 'key destroyed');
  const report = await verifyChain(s.platform.db, { expectedHead: headBefore });
  t.ok(report.ok, 'verify and verify --head pass after the key is gone');
  const life = await s.api('GET', `/audit/messages/${id}`, s.owner);
  t.equal(life.status, 200);
  t.equal(life.body.shredded, true);
  t.same(life.body.events.map((e: any) => e.type), ['MessageSent', 'MessageEdited', 'MessagesDeleted', 'MessagesShredded']);
  const sent = life.body.events[0];
  t.equal(sent.data.content, SHREDDED, 'the audit shows that there was content, not the content');
  t.equal(sent.data.sender_id, alice.id, 'metadata stays');
  const shred = life.body.events[3];
  t.same(shred.data.reason, 'deleted');
  t.notOk(JSON.stringify(life.body).includes(body));
  // Shredding again is harmless.
  const again = await s.api('DELETE', `/messages/${id}`, alice);
  t.equal(again.status, 400, 'the message is gone');
});

t.test('default grace period: deleted content stays in the log until the period ends, then the job shreds it', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'grace', []);
  const body = marker();
  const id = await sendStream(s, alice, sid, 'topic', body);
  t.equal((await s.api('DELETE', `/messages/${id}`, alice)).status, 200);
  const realm = (await getDefaultRealm(s.platform.db))!;
  const ctx = s.platform;
  t.equal(await shredDueDeletions(ctx, realm, new Date(Date.now() + 29 * 86_400_000), ctx.config.deletedMessageShredDays), 0, 'nothing due within 30 days');
  t.ok(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${id}`).executeTakeFirst(), 'key kept during the grace period');
  t.equal(await shredDueDeletions(ctx, realm, new Date(Date.now() + 31 * 86_400_000), ctx.config.deletedMessageShredDays), 1, 'due after 30 days');
  t.equal(await shredDueDeletions(ctx, realm, new Date(Date.now() + 32 * 86_400_000), ctx.config.deletedMessageShredDays), 0, 'idempotent');
  t.same(await tablesContaining(s.platform.db, body), []);
  const before = await tableChecksums(s.platform.db, allProjections.flatMap((p) => p.tables));
  await s.platform.projections.rebuild();
  const after = await tableChecksums(s.platform.db, allProjections.flatMap((p) => p.tables));
  t.same(after, before, 'rebuild checksums match after shredding');
});

t.test('purge: administrators shred at once; others may not purge', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const sid = await createChannel(s, alice, 'purge', [admin]);
  const body = marker();
  const id = await sendStream(s, alice, sid, 'topic', body);
  const refused = await s.api('DELETE', `/messages/${id}`, alice, { purge: true });
  t.equal(refused.status, 400);
  t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.ok((await s.api('GET', `/messages/${id}`, alice)).status === 200, 'a refused purge deletes nothing');
  const purged = await s.api('DELETE', `/messages/${id}`, admin, { purge: true });
  t.equal(purged.status, 200);
  t.same(await tablesContaining(s.platform.db, body), []);
  const life = await s.api('GET', `/audit/messages/${id}`, s.owner);
  t.equal(life.body.events.at(-1).data.reason, 'purge');
  t.equal(life.body.events.at(-1).metadata.actor_id, admin.id, 'who shredded');
});

t.test('two shreds of one message at once (the DELETE and the job, or two replicas) record it once', async (t) => {
  const s = await startTestServer(t, { deletedMessageShredDays: 30 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'race', []);
  const ids = [await sendStream(s, alice, sid, 't', marker()), await sendStream(s, alice, sid, 't', marker())];
  for (const id of ids) t.equal((await s.api('DELETE', `/messages/${id}`, alice)).status, 200);
  const meta = systemMeta(1, 'test');
  const counts = await Promise.all([shredMessages(s.platform, meta, 1, ids, 'deleted'), shredMessages(s.platform, meta, 1, [...ids].reverse(), 'deleted'), shredMessages(s.platform, meta, 1, [ids[1]!], 'purge')]);
  t.equal(counts.reduce((a, b) => a + b, 0), 2, `each message counted by one shred (${counts})`);
  const shreds = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'MessagesShredded').execute();
  t.same(shreds.flatMap((row) => (row.data as { message_ids: number[] }).message_ids).sort(), [...ids].sort(), 'one MessagesShredded entry per message');
  t.equal(await shredMessages(s.platform, meta, 1, ids, 'deleted'), 0, 'a later shred finds nothing left to do');
  t.ok((await verifyChain(s.platform.db)).ok);
});
