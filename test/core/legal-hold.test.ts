import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { tablesContaining, uniqueMarker } from '../helpers/marker-search.js';

const marker = uniqueMarker;
const DAY_MS = 86_400_000;

t.test('legal hold: owners only; while a channel or a person is held nothing of theirs is shredded; the hold is an event', async (t) => {
  const s = await startTestServer(t, { deletedMessageShredDays: 0, forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const held = await createChannel(s, s.owner, 'held', [alice, bob], { message_retention_days: 1 });
  const free = await createChannel(s, s.owner, 'free', [alice, bob], { message_retention_days: 1 });

  for (const [who, code] of [[admin, 'UNAUTHORIZED_PRINCIPAL'], [alice, 'UNAUTHORIZED_PRINCIPAL']] as const) {
    const r = await s.api('POST', '/legal_holds', who, { scope: 'channel', id: held });
    t.equal(r.status, 400);
    t.equal(r.body.code, code);
  }
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'channel', id: 999999 })).status, 400, 'unknown channel');
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'team', id: held })).status, 400, 'unknown scope');
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'channel', id: held, reason: 'case 17' })).status, 200);
  t.equal((await s.api('POST', '/legal_holds', s.owner, { scope: 'user', id: bob.id })).status, 200);
  const list = await s.api('GET', '/legal_holds', s.owner);
  t.same(list.body.legal_holds.map((h: any) => [h.scope, h.subject_id, h.reason]), [['channel', held, 'case 17'], ['user', bob.id, null]]);

  const inHeld = marker();
  const byBob = marker();
  const dmWithBob = marker();
  const freeText = marker();
  const heldId = await sendStream(s, alice, held, 'topic', inHeld);
  const bobId = await sendStream(s, bob, free, 'topic', byBob);
  const dmId = await sendDm(s, alice, [bob], dmWithBob);
  const freeId = await sendStream(s, alice, free, 'topic', freeText);

  // Deletion with grace 0 and retention both pass over held data.
  t.equal((await s.api('DELETE', `/messages/${heldId}`, alice)).status, 200, 'the deletion itself happens');
  t.equal((await s.api('DELETE', `/messages/${dmId}`, alice)).status, 200, 'a DM its sender deletes');
  await s.forgetting.runOnce(new Date(Date.now() + 10 * DAY_MS));
  t.same(await tablesContaining(s.platform.db, freeText), [], 'unheld content is shredded by retention');
  t.ok(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${heldId}`).executeTakeFirst(), 'held channel: key kept');
  t.ok(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${bobId}`).executeTakeFirst(), 'held sender: key kept');
  t.ok(await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', `message:${dmId}`).executeTakeFirst(), 'held DM participant: key kept');
  t.equal((await s.api('GET', `/messages/${bobId}`, bob)).status, 200, 'held message not expired');
  t.ok(freeId);

  // Lifting the holds: the next pass shreds what waited.
  t.equal((await s.api('DELETE', '/legal_holds', s.owner, { scope: 'channel', id: held })).status, 200);
  t.equal((await s.api('DELETE', '/legal_holds', s.owner, { scope: 'user', id: bob.id })).status, 200);
  await s.forgetting.runOnce(new Date(Date.now() + 10 * DAY_MS));
  for (const text of [inHeld, byBob, dmWithBob]) t.same(await tablesContaining(s.platform.db, text), [], 'shredded once released');
  const holds = await s.api('GET', '/audit/events', s.owner, { event_types: ['LegalHoldChanged'] });
  t.same(holds.body.events.map((e: any) => [e.data.scope, e.data.held, e.metadata.actor_id]),
    [['channel', true, s.owner.id], ['user', true, s.owner.id], ['channel', false, s.owner.id], ['user', false, s.owner.id]]);
});
