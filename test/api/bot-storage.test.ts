import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { statementCounter } from '../helpers/statement-counter.js';

t.test('bot storage: set, get, remove, per user', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  const other = await s.user(Role.MEMBER, 'Other Bot', { bot_type: 1, bot_owner_id: owner.id });

  t.same((await s.api('GET', '/bot_storage', bot)).body, { result: 'success', msg: '', storage: {} }, 'empty at first');
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { b: '2', a: '1', 'ключ': 'значение' } })).status, 200);
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { b: 'two' } })).status, 200, 'a set value is replaced');
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { a: '1', b: 'two', 'ключ': 'значение' }, 'no keys: everything');
  // Only an absent keys means every key: an empty list names none (the real server checks `keys is None`).
  t.same((await s.api('GET', '/bot_storage', bot, { keys: [] })).body.storage, {}, 'empty keys: nothing');
  t.same((await s.api('GET', '/bot_storage', bot, { keys: ['b'] })).body.storage, { b: 'two' });
  t.same((await s.api('GET', '/bot_storage', other)).body.storage, {}, "another user's storage is not visible");

  const missing = await s.api('GET', '/bot_storage', bot, { keys: ['a', 'nope'] });
  t.equal(missing.status, 400);
  t.same(missing.body, { result: 'error', msg: 'Key does not exist.', code: 'BAD_REQUEST' });

  const removeMissing = await s.api('DELETE', '/bot_storage', bot, { keys: ['a', 'nope'] });
  t.same(removeMissing.body, { result: 'error', msg: 'Key does not exist.', code: 'BAD_REQUEST' });
  t.ok('a' in (await s.api('GET', '/bot_storage', bot)).body.storage, 'a failed removal removes nothing');
  t.equal((await s.api('DELETE', '/bot_storage', other, { keys: ['a'] })).body.msg, 'Key does not exist.', "nobody removes another's keys");

  t.equal((await s.api('DELETE', '/bot_storage', bot, { keys: [] })).status, 200, 'an empty list removes nothing');
  t.equal((await s.api('DELETE', '/bot_storage', bot, { keys: ['a', 'a'] })).body.msg, 'Key does not exist.', 'a key named twice counts twice, as on the real server');
  t.equal((await s.api('DELETE', '/bot_storage', bot, { keys: ['a'] })).status, 200);
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { b: 'two', 'ключ': 'значение' });
  t.equal((await s.api('DELETE', '/bot_storage', bot)).status, 200, 'no keys: remove everything');
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, {});
  t.equal((await s.api('DELETE', '/bot_storage', bot)).status, 200, 'removing everything from nothing is fine');

  const stored = await s.platform.db.selectFrom('events').select('type').where('stream_id', '=', `bot-storage-${bot.id}`).orderBy('stream_version').execute();
  t.same(stored.map((e) => e.type), ['BotStorageSet', 'BotStorageSet', 'BotStorageRemoved', 'BotStorageRemoved'], 'kept as events on the user stream');
});

t.test('bot storage: bad input', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  const bad = async (method: string, params: Record<string, unknown>, what: string) => {
    const r = await s.api(method, '/bot_storage', bot, params);
    t.equal(r.status, 400, what);
    t.equal(r.body.result, 'error', what);
    return r.body;
  };
  t.equal((await bad('PUT', {}, 'storage is required')).code, 'REQUEST_VARIABLE_MISSING');
  await bad('PUT', { storage: { a: 1 } }, 'values are strings');
  await bad('PUT', { storage: ['a'] }, 'storage is an object');
  await bad('PUT', { storage: '{not json' }, 'storage is JSON');
  t.equal((await bad('PUT', { storage: { a: 'x\u0000y' } }, 'no NUL in values')).msg, 'storage contains NULL (0x00) characters.');
  t.equal((await bad('PUT', { storage: { 'k\u0000': 'v' } }, 'no NUL in keys')).msg, 'storage contains NULL (0x00) characters.');
  await bad('GET', { keys: 'a' }, 'keys is a JSON list');
  await bad('DELETE', { keys: [1] }, 'keys are strings');
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, {}, 'nothing was stored');
  t.equal((await s.api('PUT', '/bot_storage', null, { storage: { a: 'b' } })).status, 401);
});

t.test('bot storage: the 10,000,000-character limit counts keys and values, replacements and characters', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { a: 'x'.repeat(4_999_990) } })).status, 200);
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { b: 'y'.repeat(5_000_000) } })).status, 200);
  // 4,999,991 + 5,000,001 = 9,999,992 stored; 9 more fit exactly, 10 do not.
  const over = await s.api('PUT', '/bot_storage', bot, { storage: { c: '😀'.repeat(9) } });
  t.equal(over.status, 400);
  t.same(over.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Request exceeds storage limit by 2 characters. The limit is 10000000 characters.' },
    'an emoji counts as one character');
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { c: '😀'.repeat(7) } })).status, 200, 'up to the limit is fine');
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { a: 'short' } })).status, 200, 'a replaced value frees its old size');
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { d: 'z'.repeat(1000) } })).status, 200);
  t.equal((await s.api('GET', '/bot_storage', bot, { keys: ['a', 'c'] })).body.storage.c, '😀'.repeat(7));
});

t.test('bot storage: concurrent writes from one bot all succeed, the last write of each key wins', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  const writes = 60;
  const answers = await Promise.all(Array.from({ length: writes }, (_, i) => s.api('PUT', '/bot_storage', bot, { storage: { count: String(i), [`k${i}`]: `v${i}` } })));
  t.same(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.code]), [], 'no write is refused (no 409 from a version conflict)');
  const storage = (await s.api('GET', '/bot_storage', bot)).body.storage;
  for (let i = 0; i < writes; i++) t.equal(storage[`k${i}`], `v${i}`);
  // The last committed write of `count` is what a fresh read sees.
  const sets = await s.platform.db.selectFrom('events').select('stream_version').where('stream_id', '=', `bot-storage-${bot.id}`).where('type', '=', 'BotStorageSet').execute();
  t.equal(sets.length, writes, 'one event per write');
  const last = await s.platform.store.readStream(`bot-storage-${bot.id}`);
  t.equal(storage.count, (last.at(-1)!.data as { storage: Record<string, string> }).storage.count, 'count holds the last committed write');
});

t.test('bot storage: a write decides with no statement before its append, on the state the bot\'s last one left', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { count: '1', keep: 'x' } })).status, 200);
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { count: '1', keep: 'x' }, 'folded');
  // Reads of the storage and of its stream in the log (the fold's writes, the append and the event
  // queues' reads of the whole log, which may overlap the next write now, are not counted).
  const seen: string[] = [];
  const counter = statementCounter(s, (text) => {
    const counted = /\bbot_storage\b|\bstream_id"?\s*=/.test(text) && !/\bappend_events?\b|^\s*(\/\*.*?\*\/\s*)?(insert|update|delete)\b/i.test(text);
    if (counted) seen.push(text.slice(0, 120));
    return counted;
  });
  t.teardown(() => counter.restore());
  for (const [label, method, body] of [['a set', 'PUT', { storage: { count: '2' } }], ['a removal', 'DELETE', { keys: ['keep'] }], ['a removal of everything', 'DELETE', {}]] as const) {
    seen.length = 0;
    t.equal((await s.api(method, '/bot_storage', bot, body)).status, 200);
    // The first write of this server read the storage; the append's expected version stands for the rest.
    t.same(seen.length, 0, `${label}: no statement`, { seen });
  }
  counter.restore();
  t.same((await s.api('GET', '/bot_storage', bot)).body.storage, {}, 'and each decided on the state the one before left');
});

t.test('bot storage: a write decides on the bot\'s unfolded writes without waiting for their fold', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { a: 'x'.repeat(4_999_980), gone: 'soon' } })).status, 200);
  t.same(Object.keys((await s.api('GET', '/bot_storage', bot)).body.storage), ['a', 'gone'], 'folded');

  // Folding stops until the gate opens: every write below decides without it.
  const runner = s.platform.projections;
  const catchUp = runner.catchUp.bind(runner);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  runner.catchUp = async (head) => {
    await gate;
    return catchUp(head);
  };
  t.teardown(() => open());
  // A wait for the fold cannot end now (the old code waited out its 10 s, then decided on the stale table).
  const waits: number[] = [];
  const waitFor = runner.waitFor.bind(runner);
  runner.waitFor = (position, timeoutMs) => {
    waits.push(position);
    return waitFor(position, timeoutMs);
  };
  const put = (storage: Record<string, string>) => s.api('PUT', '/bot_storage', bot, { storage }).then((r) => [r.status, r.body.msg]);

  t.same(await put({ b: 'y'.repeat(5_000_000) }), [200, ''], 'a write on folded storage');
  t.same(await put({ count: '1' }), [200, ''], 'the next one, with the last one unfolded');
  t.same((await s.api('DELETE', '/bot_storage', bot, { keys: ['gone'] })).status, 200, 'a folded key removed');
  t.same((await s.api('DELETE', '/bot_storage', bot, { keys: ['count'] })).status, 200, 'a key only an unfolded write set exists');
  const missing = await s.api('DELETE', '/bot_storage', bot, { keys: ['gone'] }).then((r) => [r.status, r.body.msg]);
  t.same(missing, [400, 'Key does not exist.'], 'a key an unfolded write removed is gone');
  // 4,999,981 (a) + 5,000,001 (b) = 9,999,982: the unfolded b and the removals count.
  t.same(await put({ c: '😀'.repeat(19) }), [400, 'Request exceeds storage limit by 2 characters. The limit is 10000000 characters.'], 'the limit counts unfolded writes');
  t.same(await put({ c: '😀'.repeat(17) }), [200, ''], 'up to the limit is fine');
  t.same(waits, [], 'no write waited for a fold');

  open();
  t.same((await s.api('GET', '/bot_storage', bot, { keys: ['c'] })).body.storage, { c: '😀'.repeat(17) });
  const all = (await s.api('GET', '/bot_storage', bot)).body.storage;
  t.same(Object.keys(all), ['a', 'b', 'c'], 'every write folded, in order');
});

t.test('bot storage: a write another process appended is decided on, whatever this server last knew', async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.MEMBER, 'Owner');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { mine: 'x' } })).status, 200);
  const stream = `bot-storage-${bot.id}`;
  // As another server would: straight to the log, behind this one's back.
  const elsewhere = async (storage: Record<string, string>) => {
    const events = await s.platform.store.readStream(stream);
    const realm = await s.platform.db.selectFrom('users').select('realm_id').where('id', '=', bot.id).executeTakeFirstOrThrow();
    const metadata = { actor_id: bot.id, realm_id: realm.realm_id, client: 'test', request_id: `elsewhere-${events.length}`, time: new Date().toISOString() };
    await s.platform.commands.run(metadata, async () => ({
      appends: [{ streamId: stream, expectedVersion: events.length, events: [{ type: 'BotStorageSet' as const, data: { user_id: bot.id, storage, key_generation: 0 } }] }],
      result: undefined,
    }));
  };
  await elsewhere({ theirs: 'y' });
  t.equal((await s.api('DELETE', '/bot_storage', bot, { keys: ['theirs'] })).status, 200, 'a key written elsewhere can be removed');
  // 9,999,999 characters in all (an event holds at most 8 MiB): one more fits, 24 more do not.
  await elsewhere({ big1: 'z'.repeat(4_999_996) });
  await elsewhere({ big2: 'z'.repeat(4_999_990) });
  const over = await s.api('PUT', '/bot_storage', bot, { storage: { more: 'w'.repeat(20) } });
  t.equal(over.status, 400, 'the size written elsewhere counts');
  t.match(over.body.msg, /exceeds storage limit by \d+ characters/);
  t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { mine: 'xx' } })).status, 200, 'a write within the limit still goes');
  t.same(Object.keys((await s.api('GET', '/bot_storage', bot)).body.storage), ['big1', 'big2', 'mine']);
  t.equal((await s.api('GET', '/bot_storage', bot, { keys: ['mine'] })).body.storage.mine, 'xx');
});
