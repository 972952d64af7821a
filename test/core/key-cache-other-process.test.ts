import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { testConfig } from '../helpers/config.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { shredMessages, systemMeta } from '../../src/services/forgetting.js';
import { messageStream } from '../../src/services/messages.js';
import { SHREDDED } from '../../src/eventstore/crypto/index.js';

// Two server processes on one PostgreSQL: each caches data keys and the views it opened with them
// (its own sends' plaintext, remembered at append). A shred by the other process must reach both.
t.test('a message sent through A and shredded through B reads as shredded on A', { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL' }, async (t) => {
  const config = await testConfig({ dataKeySecret: randomBytes(32).toString('hex') });
  const a = await buildServer(config, { projections: allProjections });
  t.teardown(() => a.close());
  const b = await buildServer(config, { projections: allProjections });
  t.teardown(() => b.close());
  const owner = await a.platform.db.selectFrom('users').selectAll().where('role', '=', 100).executeTakeFirstOrThrow();
  const post = (url: string, params: Record<string, unknown>) => a.fastify.inject({
    method: 'POST', url: `/api/v1${url}`, payload: encodeParams(params),
    headers: { authorization: basicAuth(owner.delivery_email, owner.api_key), 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal((await post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'both' }]) })).statusCode, 200);
  const words = `MARKER${randomUUID().replace(/-/g, '')}`;
  const sent = await post('/messages', { type: 'stream', to: 'both', topic: 'topic', content: words });
  t.equal(sent.statusCode, 200);
  const id = sent.json().id as number;

  // A's readers: the log as its followers read it (this process's commits, opened once at append)
  // and as the audit reads it (from the database, opened with A's cached key).
  const [appended] = await a.platform.store.readStream(messageStream(id));
  const sentEvent = async () => (await a.platform.store.readRange(appended!.position - 1, appended!.position, ['MessageSent']))[0]!;
  const stored = async () => (await a.platform.store.readStream(messageStream(id)))[0]!;
  t.equal((await sentEvent()).data.content, words, 'A reads its own send');
  t.equal((await stored()).data.content, words);

  t.equal(await shredMessages(b.platform, systemMeta(owner.realm_id, 'test'), owner.realm_id, [id], 'purge'), 1, 'B shreds it');
  t.equal((await b.platform.store.readStream(messageStream(id)))[0]!.data.content, SHREDDED, 'on B at once');
  // A learns of it from B's wake over NATS, or at the latest from its next poll of the log.
  const deadline = Date.now() + 5_000;
  while ((await stored()).data.content !== SHREDDED && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal((await stored()).data.content, SHREDDED, 'on A, opened from the database');
  t.equal((await sentEvent()).data.content, SHREDDED, 'on A, from the view remembered at append');
  t.equal((await sentEvent()).data.topic, SHREDDED);
});
