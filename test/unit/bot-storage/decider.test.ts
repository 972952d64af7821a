import t from 'tap';
import { BOT_STORAGE_SIZE_LIMIT, characterCount, decideBotStorage } from '../../../src/domain/bot-storage/decider.js';

const state = (total_size: number, existing: Record<string, number> = {}) => ({ total_size, existing: new Map(Object.entries(existing)) });

t.test('characters are code points', async (t) => {
  t.equal(characterCount(''), 0);
  t.equal(characterCount('abc'), 3);
  t.equal(characterCount('😀é'), 2);
});

t.test('set: the size after the change decides, counting what it replaces', async (t) => {
  const set = (storage: Record<string, string>) => ({ type: 'SetBotStorage' as const, user_id: 7, storage });
  t.same(decideBotStorage(set({}), state(0)), [], 'nothing to set: no event');
  t.same(decideBotStorage(set({ k: 'v' }), state(0)), [{ type: 'BotStorageSet', data: { user_id: 7, storage: { k: 'v' } } }]);
  t.same(decideBotStorage(set({ k: 'v' }), state(BOT_STORAGE_SIZE_LIMIT - 2)).length, 1, 'exactly at the limit');
  t.throws(() => decideBotStorage(set({ k: 'vv' }), state(BOT_STORAGE_SIZE_LIMIT - 2)), {
    message: 'Request exceeds storage limit by 1 characters. The limit is 10000000 characters.',
  });
  t.same(decideBotStorage(set({ k: 'vvvv' }), state(BOT_STORAGE_SIZE_LIMIT, { k: 5 })).length, 1, 'a replacement frees the old entry');
});

t.test('remove: every key must exist', async (t) => {
  const remove = (keys: string[]) => ({ type: 'RemoveBotStorage' as const, user_id: 7, keys });
  t.same(decideBotStorage(remove([]), state(0)), []);
  t.same(decideBotStorage(remove(['a']), state(2, { a: 2 })), [{ type: 'BotStorageRemoved', data: { user_id: 7, keys: ['a'] } }]);
  // The real server compares the entries found with the keys named, repeats included.
  t.throws(() => decideBotStorage(remove(['a', 'a']), state(2, { a: 2 })), { message: 'Key does not exist.' });
  t.throws(() => decideBotStorage(remove(['a', 'b']), state(2, { a: 2 })), { message: 'Key does not exist.' });
});
