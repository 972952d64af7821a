import t from 'tap';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { applyRetention } from '../../src/services/retention.js';
import { SHRED_BATCH } from '../../src/services/forgetting.js';
import { messageStream } from '../../src/services/messages.js';
import { getDefaultRealm } from '../../src/read/realm.js';
import { verifyChain } from '../../src/eventstore/verify.js';

const vacuumsOfMessages = async (db: Parameters<typeof verifyChain>[0]) => {
  const { rows } = await sql<{ n: string }>`SELECT (vacuum_count)::text AS n FROM pg_stat_user_tables WHERE relname = 'messages'`.execute(db);
  return Number(rows[0]?.n ?? 0);
};

t.test('a retention pass over several pages shreds them all and cleans up (VACUUM) once, after the last page', async (t) => {
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const { db, store, commands } = s.platform;
  const sid = await createChannel(s, s.owner, 'old', []);
  const first = await sendStream(s, s.owner, sid, 'topic', 'a template');
  const template = (await store.readStream(messageStream(first)))[0]!.data;
  // Two pages and one more, 400 days old, sealed as the service seals them.
  const count = 2 * SHRED_BATCH + 1;
  const old = Math.floor(Date.now() / 1000) - 400 * 86_400;
  const appends = [];
  for (let i = 0; i < count; i++) {
    const id = await commands.nextId('message_id_seq');
    appends.push({ streamId: messageStream(id), expectedVersion: -1, events: [{ type: 'MessageSent', data: { ...template, message_id: id, date_sent: old, content: `old ${id}`, rendered_content: `<p>old ${id}</p>` } }] });
  }
  const events = await store.append(appends, { actor_id: s.owner.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() });
  await s.platform.projections.waitFor(events.at(-1)!.position, 60_000);
  const realm = (await getDefaultRealm(db))!;
  const before = await vacuumsOfMessages(db);
  const shredded = await applyRetention(s.platform, { ...realm, properties: { ...(realm.properties as object), message_retention_days: 365 } }, new Date());
  t.equal(shredded, count, 'every old message shredded');
  t.equal((await db.selectFrom('messages').select('id').where('id', '=', first).execute()).length, 1, 'the new message stays');
  t.equal((await db.selectFrom('events').select('position').where('type', '=', 'MessagesShredded').execute()).length, 3, 'one event per page');
  t.equal(await vacuumsOfMessages(db) - before, 1, 'one VACUUM of the messages table for the whole pass');
  t.ok((await verifyChain(db)).ok);
});
