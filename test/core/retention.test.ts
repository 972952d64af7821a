import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream } from '../helpers/channels-fixture.js';
import { tablesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { expiredMessageIds } from '../../src/services/retention.js';
import { getDefaultRealm } from '../../src/read/realm.js';
import { statementCounter } from '../helpers/statement-counter.js';

const marker = uniqueMarker;
const DAY_MS = 86_400_000;

t.test('retention: channel overrides, realm default, unlimited; the job shreds, catches up, and reports in /metrics', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const short = await createChannel(s, s.owner, 'short-lived', [alice], { message_retention_days: 3 });
  const forever = await createChannel(s, s.owner, 'kept', [alice], { message_retention_days: 'unlimited' });
  const inherits = await createChannel(s, s.owner, 'inherits', [alice]);
  const gone = marker();
  const kept = marker();
  const shortId = await sendStream(s, alice, short, 'topic', gone);
  const foreverId = await sendStream(s, alice, forever, 'topic', kept);
  const inheritsId = await sendStream(s, alice, inherits, 'topic', kept);
  const dmId = await sendDm(s, alice, [s.owner], kept);
  const realm = (await getDefaultRealm(s.platform.db))!;

  t.same(await expiredMessageIds(s.platform.db, realm, new Date(Date.now() + 2 * DAY_MS)), [], 'nothing within 3 days');
  t.same(await expiredMessageIds(s.platform.db, realm, new Date(Date.now() + 4 * DAY_MS)), [shortId], 'the channel override applies; the realm default is unlimited');
  const limitedRealm = { ...realm, properties: { ...(realm.properties as object), message_retention_days: 10 } };
  t.same(await expiredMessageIds(s.platform.db, limitedRealm, new Date(Date.now() + 11 * DAY_MS)), [shortId, inheritsId, dmId].sort((a, b) => a - b),
    'with an organization period, inheriting channels and direct messages expire; an unlimited channel never does');

  // The server was down for a year: the first pass catches up on everything due.
  t.equal(await s.forgetting.runOnce(new Date(Date.now() + 365 * DAY_MS)), true);
  t.equal((await s.api('GET', `/messages/${shortId}`, alice)).status, 400, 'expired message gone from the API');
  t.equal((await s.api('GET', `/messages/${foreverId}`, alice)).status, 200, 'unlimited channel kept');
  t.same(await tablesContaining(s.platform.db, gone), [], 'expired content found in no table');
  t.ok((await verifyChain(s.platform.db)).ok);
  const life = await s.api('GET', `/audit/messages/${shortId}`, s.owner);
  t.equal(life.body.shredded, true);
  t.equal(life.body.events.at(-1).data.reason, 'retention');
  t.equal(await s.forgetting.runOnce(new Date(Date.now() + 365 * DAY_MS)), true, 'a second pass');
  t.equal((await s.platform.db.selectFrom('events').select('position').where('type', '=', 'MessagesShredded').execute()).length, 1, 'finds nothing more to do');

  const metrics = await s.fastify.inject({ method: 'GET', url: '/metrics' });
  t.match(metrics.body, /forgetting_messages_shredded_total\{reason="retention"\} [1-9]/);
  t.match(metrics.body, /forgetting_job_runs [1-9]/);
  t.match(metrics.body, /forgetting_pending_shreds 0/);
});

t.test('retention: with no period anywhere no message row is read; with channel periods only those channels are', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const open = await createChannel(s, s.owner, 'open-ended', [alice]);
  await sendStream(s, alice, open, 'topic', marker());
  await sendDm(s, alice, [s.owner], marker());
  const realm = (await getDefaultRealm(s.platform.db))!;
  const later = new Date(Date.now() + 365 * DAY_MS);

  const messageReads = statementCounter(s, (text) => /\bFROM messages\b/i.test(text));
  t.teardown(() => messageReads.restore());
  t.same(await expiredMessageIds(s.platform.db, realm, later), []);
  t.equal(await s.forgetting.runOnce(later), true);
  t.equal(messageReads.count(), 0, 'the default (unlimited everywhere) reads no message');

  const short = await createChannel(s, s.owner, 'short-lived', [alice], { message_retention_days: 3 });
  const shortId = await sendStream(s, alice, short, 'topic', marker());
  t.same(await expiredMessageIds(s.platform.db, realm, later), [shortId], 'only the channel with its own period expires');
});
