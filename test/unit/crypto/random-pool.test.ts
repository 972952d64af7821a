import t from 'tap';
import { randomSlice } from '../../../src/eventstore/crypto/random-pool.js';

t.test('each draw is fresh bytes of the asked length', async (t) => {
  const seen = new Set<string>();
  // Many times the pool's size: draws keep coming fresh across refills.
  for (let i = 0; i < 20_000; i++) seen.add(randomSlice(12).toString('hex'));
  t.equal(seen.size, 20_000, 'no nonce drawn twice');
  t.equal(randomSlice(32).length, 32);
  t.equal(randomSlice(100_000).length, 100_000, 'larger than the pool');
  // One hex digit in 16 is a 0 in random bytes; a zeroed stretch of the pool would show many more.
  const zeros = [...randomSlice(4096).toString('hex')].filter((c) => c === '0').length;
  t.ok(zeros < 4096 * 2 * 0.1, 'not a zeroed pool handed out');
});

t.test('a drawn key owns its bytes: refilling the pool does not change it', async (t) => {
  const key = randomSlice(32);
  const copy = Buffer.from(key);
  for (let i = 0; i < 2_000; i++) randomSlice(32);
  t.same(key, copy);
});

t.test('a length that is not a positive integer is refused', async (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => randomSlice(bad), /positive integer/, String(bad));
});
