import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { EventCrypto, SHREDDED } from '../../../src/eventstore/crypto/index.js';
import { DataKeyStore } from '../../../src/eventstore/crypto/key-store.js';
import { seal } from '../../../src/eventstore/crypto/envelope.js';
import { messageKey, userKey } from '../../../src/eventstore/crypto/personal-fields.js';
import type { Db } from '../../../src/db/database.js';
import type { StoredEvent } from '../../../src/eventstore/types.js';

/** Keys only in the cache: nothing here may reach a database. */
function cryptoWithKeys(...scopes: ReturnType<typeof messageKey>[]): EventCrypto {
  const keys = new DataKeyStore(undefined as unknown as Db, randomBytes(32));
  keys.adopt(scopes.map((scope) => keys.mint(scope)));
  return new EventCrypto(keys);
}

let position = 0;
function stored(type: string, data: Record<string, unknown>, eventId = randomUUID()): StoredEvent {
  position += 1;
  return { position, event_id: eventId, stream_id: 's', stream_version: 1, type, schema_version: 1, data, metadata: {} as StoredEvent['metadata'], hash: '' };
}

const sent = { message_id: 7, content: 'secret words', rendered_content: '<p>secret words</p>', topic: 'a topic', widget_content: null, sender_id: 1 };

t.test('an event\'s sealed fields share one envelope, and open to what was sealed', async (t) => {
  const crypto = cryptoWithKeys(messageKey(7));
  const eventId = randomUUID();
  const sealed = crypto.seal('MessageSent', sent, eventId);
  t.notOk(JSON.stringify(sealed).includes('secret'), 'no plaintext');
  t.notOk(JSON.stringify(sealed).includes('a topic'), 'the topic is sealed too');
  t.same((sealed.content as { paths: string[] }).paths, ['content', 'rendered_content', 'topic']);
  t.same(sealed.topic, { $enc: 2, k: 'message:7', at: 'content' });
  t.equal(sealed.widget_content, null, 'null is left as it is');
  const [opened] = await crypto.openEvents([stored('MessageSent', JSON.parse(JSON.stringify(sealed)), eventId)]);
  t.same(opened!.data, sent);
});

t.test('nested fields (a list of drafts) go into the one envelope under their concrete paths', async (t) => {
  const crypto = cryptoWithKeys(userKey(3));
  const data = { user_id: 3, drafts: [{ content: 'one', topic: 't1', to: [1] }, { content: 'two', topic: 't2', to: [2] }] };
  const eventId = randomUUID();
  const sealed = crypto.seal('DraftsCreated', data, eventId);
  t.notOk(JSON.stringify(sealed).includes('two'));
  const [opened] = await crypto.openEvents([stored('DraftsCreated', sealed, eventId)]);
  t.same(opened!.data, data);
});

t.test('a bundle moved to another event, or with its paths changed, or whose key is gone reads as shredded', async (t) => {
  const crypto = cryptoWithKeys(messageKey(7));
  const eventId = randomUUID();
  const sealed = crypto.seal('MessageSent', sent, eventId);
  const [moved] = await crypto.openEvents([stored('MessageSent', sealed, randomUUID())]);
  t.equal(moved!.data.content, SHREDDED);
  t.equal(moved!.data.topic, SHREDDED);
  const head = sealed.content as { paths: string[] };
  const relabeled = { ...sealed, content: { ...head, paths: ['topic', 'rendered_content', 'content'] } };
  const [swapped] = await crypto.openEvents([stored('MessageSent', relabeled, eventId)]);
  t.equal(swapped!.data.topic, SHREDDED, 'values cannot be moved between fields');
  const headless = { ...sealed, content: { $enc: 2, k: 'message:7', at: 'content' } };
  const [orphan] = await crypto.openEvents([stored('MessageSent', headless, eventId)]);
  t.equal(orphan!.data.topic, SHREDDED, 'a reference opens only through an authenticated head');
  crypto.evict(['message:7']);
  const [gone] = await crypto.openEvents([stored('MessageSent', sealed, eventId)]);
  t.equal(gone!.data.content, SHREDDED);
  t.equal(gone!.data.rendered_content, SHREDDED);
});

t.test('events sealed one envelope per value (format 1, written before bundles) still open', async (t) => {
  const crypto = cryptoWithKeys(messageKey(7));
  const key = crypto.keys.cached('message:7')!;
  const eventId = randomUUID();
  const old = { ...sent, content: seal(key, 'message:7', eventId, 'content', sent.content), topic: seal(key, 'message:7', eventId, 'topic', sent.topic), rendered_content: seal(key, 'message:7', eventId, 'rendered_content', sent.rendered_content) };
  const [opened] = await crypto.openEvents([stored('MessageSent', old, eventId)]);
  t.same(opened!.data, sent);
});

t.test('a view remembered by the appender is dropped once a key is forgotten', async (t) => {
  const crypto = cryptoWithKeys(messageKey(7));
  const eventId = randomUUID();
  const event = stored('MessageSent', crypto.seal('MessageSent', sent, eventId), eventId);
  crypto.rememberOpened(event, { ...event, data: sent });
  t.equal((await crypto.openEvents([event]))[0]!.data.content, 'secret words');
  // Destroyed by this process (DataKeyStore.destroy ends in forget), before any shred event is read.
  crypto.keys.forget(['message:7']);
  t.equal((await crypto.openEvents([event]))[0]!.data.content, SHREDDED, 'no plaintext from the remembered view');
});

t.test('keys are minted only for subjects an event starts, and only when none is cached', async (t) => {
  const crypto = cryptoWithKeys(messageKey(8));
  const appends = [
    { streamId: 'message-7', expectedVersion: undefined, events: [{ type: 'MessageSent', data: sent }] },
    { streamId: 'message-8', expectedVersion: undefined, events: [{ type: 'MessageSent', data: { ...sent, message_id: 8 } }] },
    { streamId: 'message-9', expectedVersion: undefined, events: [{ type: 'MessageEdited', data: { message_id: 9, content: 'x' } }] },
  ];
  t.same([...crypto.mint(appends).keys()], ['message:7']);
});
