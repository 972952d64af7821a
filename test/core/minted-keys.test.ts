import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { messageStream } from '../../src/services/messages.js';
import { EventCrypto, kekOf } from '../../src/eventstore/crypto/index.js';
import { DataKeyStore } from '../../src/eventstore/crypto/key-store.js';
import { messageKey } from '../../src/eventstore/crypto/personal-fields.js';
import { verifyChain } from '../../src/eventstore/verify.js';

t.test('a sent message\'s key is stored by its append; one that exists already is used instead', async (t) => {
  const s = await startTestServer(t);
  const { db, store, commands } = s.platform;
  const sid = await createChannel(s, s.owner, 'keys', []);
  const first = await sendStream(s, s.owner, sid, 'topic', 'first words');
  const keyRows = async (id: number) => db.selectFrom('data_keys').select(['key_id', 'wrapped']).where('key_id', '=', `message:${id}`).execute();
  t.equal((await keyRows(first)).length, 1, 'the key of a sent message is stored');

  const template = (await store.readStream(messageStream(first)))[0]!.data;
  const clashing = await commands.nextId('message_id_seq');
  const fresh = await commands.nextId('message_id_seq');
  // Another process (its own cache) already stored a key for `clashing`, as a retried command would have.
  const other = new DataKeyStore(db, kekOf(db)!);
  await other.ensure([messageKey(clashing)]);
  const [existing] = await keyRows(clashing);
  const meta = { actor_id: s.owner.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  const send = (id: number) => store.append([{ streamId: messageStream(id), expectedVersion: -1, events: [{ type: 'MessageSent', data: { ...template, message_id: id, content: `words of ${id}` } }] }], meta);
  // Both requests may share one commit batch: the clash must not fail its neighbour.
  const [a, b] = await Promise.all([send(clashing), send(fresh)]);
  t.equal(a[0]!.data.content, `words of ${clashing}`);
  t.equal(b[0]!.data.content, `words of ${fresh}`);
  t.same(await keyRows(clashing), [existing], 'the stored key stays, not replaced');
  t.equal((await keyRows(fresh)).length, 1);
  // A reader with nothing cached opens both from the database.
  const reader = new EventCrypto(new DataKeyStore(db, kekOf(db)!));
  const opened = await reader.openEvents([...(await store.readStream(messageStream(clashing))), ...(await store.readStream(messageStream(fresh)))].map((e) => ({ ...e })));
  t.same(opened.map((e) => e.data.content), [`words of ${clashing}`, `words of ${fresh}`], 'each opens with the key in the table');
  t.ok((await verifyChain(db)).ok);
});
