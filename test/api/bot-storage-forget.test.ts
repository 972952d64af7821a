import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

t.test("a deactivated bot's storage is forgotten: gone from the table, unreadable in the log, not back on reactivation", async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Keeper', { bot_type: 1, bot_owner_id: alice.id });
  const other = await s.user(Role.MEMBER, 'Other', { bot_type: 1, bot_owner_id: alice.id });
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { board: 'x.o', secret: 'hunter2' } })).status, 200);
  t.equal((await s.api('DELETE', '/bot_storage', bot, { keys: ['board'] })).status, 200);
  t.equal((await s.api('PUT', '/bot_storage', other, { storage: { kept: 'yes' } })).status, 200);

  // What the log stores is sealed: the value is not in the stored row.
  const stored = await s.platform.db.selectFrom('events').select(['type', 'data']).where('stream_id', '=', `bot-storage-${bot.id}`).orderBy('position').execute();
  t.same(stored.map((e) => e.type), ['BotStorageSet', 'BotStorageRemoved']);
  t.notMatch(JSON.stringify(stored), /hunter2|board/, 'keys and values are sealed in the log');

  t.equal((await s.api('DELETE', `/bots/${bot.id}`, alice)).status, 200);
  t.same(await s.platform.db.selectFrom('bot_storage').selectAll().where('user_id', '=', bot.id).execute(), [], 'the rows are gone');
  const history = await s.platform.store.readStream(`bot-storage-${bot.id}`);
  t.same(history.map((e) => e.type), ['BotStorageSet', 'BotStorageRemoved', 'BotStorageForgotten']);
  t.equal(history[0]!.data.storage, '(shredded)', 'the log no longer opens what it stored');
  t.equal(history[1]!.data.keys, '(shredded)');
  t.same(history[2]!.data, { user_id: bot.id, key_ids: [`bot-storage:${bot.id}:0`], reason: 'bot_deactivated' }, 'the event names no forgotten value');

  // Reactivated: empty, and what it stores now is under a new key that works.
  t.equal((await s.api('POST', `/users/${bot.id}/reactivate`, s.owner)).status, 200);
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, {}, 'reactivation does not bring it back');
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { fresh: 'start' } })).status, 200);
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { fresh: 'start' });
  t.same((await s.api('GET', '/bot_storage', other)).body.storage, { kept: 'yes' }, "another bot's storage is untouched");

  // The owner's deactivation deactivates their bots, and forgets their storage too.
  t.equal((await s.api('DELETE', `/users/${alice.id}`, s.owner)).status, 200);
  t.same(await s.platform.db.selectFrom('bot_storage').select('user_id').execute(), [], 'every bot of the owner is forgotten');
  const second = await s.platform.store.readStream(`bot-storage-${bot.id}`);
  t.same(second.at(-1)!.data.key_ids, [`bot-storage:${bot.id}:1`], 'the second generation went');

  // A rebuild from the log gives the same (empty) table.
  await s.platform.projections.rebuild();
  t.same(await s.platform.db.selectFrom('bot_storage').selectAll().execute(), []);
  // Deactivating a bot that stored nothing appends nothing.
  const quiet = await s.user(Role.MEMBER, 'Quiet', { bot_type: 1, bot_owner_id: s.owner.id });
  t.equal((await s.api('DELETE', `/bots/${quiet.id}`, s.owner)).status, 200);
  t.same(await s.platform.store.readStream(`bot-storage-${quiet.id}`), []);
});
