import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { EventStore } from '../../../src/eventstore/event-store.js';
import { EventCrypto } from '../../../src/eventstore/crypto/index.js';
import { DataKeyStore } from '../../../src/eventstore/crypto/key-store.js';
import type { Db, NamedQuery } from '../../../src/db/database.js';

interface Call { name: string; text: string; values: unknown[] }

/** A store whose append statement is recorded and answered as the database would, with no database. */
function recordingStore(): { store: EventStore; calls: Call[] } {
  const calls: Call[] = [];
  let position = 0;
  const namedQuery = (async (name: string, text: string, values: unknown[]) => {
    calls.push({ name, text, values });
    // The first statement takes a while, as a commit does: the requests behind it form the next batch.
    if (calls.length === 1) await new Promise((resolve) => setTimeout(resolve, 50));
    const requests = values[1];
    return (Array.isArray(requests) ? requests : [requests]).map((request) => ({ request, ok: true, out_position: ++position, out_version: 1, out_hash: 'h'.repeat(64), actual: null }));
  }) as unknown as NamedQuery;
  const store = new EventStore(undefined as unknown as Db, namedQuery);
  store.crypto = new EventCrypto(new DataKeyStore(undefined as unknown as Db, randomBytes(32)));
  return { store, calls };
}

const meta = { actor_id: 1, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
const sent = (id: number) => [{ streamId: `message-${id}`, expectedVersion: -1, events: [{ type: 'MessageSent', data: { message_id: id, content: `words ${id}`, rendered_content: `<p>words ${id}</p>`, topic: 't' } }] }];

t.test('a lone sent message goes with its new key through the one-event statement', async (t) => {
  const { store, calls } = recordingStore();
  const [event] = await store.append(sent(1), meta);
  t.equal(event!.data.content, 'words 1', 'the appender sees its plaintext');
  t.equal(calls.length, 1);
  const [call] = calls;
  t.equal(call!.name, 'append_event_with_keys');
  t.match(call!.text, /INSERT INTO data_keys[\s\S]*append_event\(/);
  t.notOk(Array.isArray(call!.values[1]), 'scalar event parameters (no array of JSON texts to encode)');
  const stored = JSON.parse(call!.values[7] as string) as Record<string, unknown>;
  t.notOk(JSON.stringify(stored).includes('words'), 'the stored data is sealed');
  t.same(call!.values.slice(12, 16), [['message:1'], ['message'], ['1'], [1]], 'the key row goes with it');
  t.match((call!.values[16] as string[])[0], /^[A-Za-z0-9+/]+=*$/, 'the key is stored wrapped');
});

t.test('sends that share a batch go through the batch statement, each with its key', async (t) => {
  const { store, calls } = recordingStore();
  const first = store.append(sent(1), meta);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const events = await Promise.all([first, store.append(sent(2), meta), store.append(sent(3), meta)]);
  t.same(events.map(([e]) => e!.data.content), ['words 1', 'words 2', 'words 3']);
  t.same(calls.map((c) => c.name), ['append_event_with_keys', 'append_events_with_keys']);
  t.same(calls[1]!.values[12], ['message:2', 'message:3']);
});
