import t from 'tap';
import { randomBytes } from 'node:crypto';
import { open, seal } from '../../../src/eventstore/crypto/envelope.js';
import { parseKekSecret, unwrapWithKek, wrapWithKek } from '../../../src/eventstore/crypto/kek.js';

t.test('a sealed value opens only with its key, event id and field', async (t) => {
  const key = randomBytes(32);
  const envelope = seal(key, 'message:1', 'event-a', 'content', 'secret words');
  t.equal(open(key, 'event-a', 'content', envelope), 'secret words');
  t.notOk(JSON.stringify(envelope).includes('secret'), 'no plaintext in the envelope');
  t.throws(() => open(key, 'event-b', 'content', envelope), 'moved to another event');
  t.throws(() => open(key, 'event-a', 'topic', envelope), 'moved to another field');
  t.throws(() => open(randomBytes(32), 'event-a', 'content', envelope), 'another key');
  t.throws(() => open(key, 'event-a', 'content', { ...envelope, ct: Buffer.from('x').toString('base64') }), 'tampered');
  const again = seal(key, 'message:1', 'event-a', 'content', 'secret words');
  t.not(again.iv, envelope.iv, 'a fresh nonce per value');
});

t.test('data keys are wrapped by the KEK, bound to their id', async (t) => {
  const kek = randomBytes(32);
  const dataKey = randomBytes(32);
  const wrapped = wrapWithKek(kek, 'data-key:message:1', dataKey);
  t.same(unwrapWithKek(kek, 'data-key:message:1', wrapped), dataKey);
  t.throws(() => unwrapWithKek(kek, 'data-key:message:2', wrapped), 'a wrapped key cannot be moved to another id');
  t.throws(() => unwrapWithKek(randomBytes(32), 'data-key:message:1', wrapped), 'wrong KEK');
});

t.test('KEK secrets: 64 hex digits or base64 of 32 bytes, nothing else', async (t) => {
  const key = randomBytes(32);
  t.same(parseKekSecret(key.toString('hex')), key);
  t.same(parseKekSecret(`${key.toString('base64')}\n`), key);
  for (const bad of ['', 'short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'z'.repeat(64)]) {
    t.throws(() => parseKekSecret(bad), /DATA_KEY_SECRET must be 32 random bytes/, JSON.stringify(bad));
  }
});
