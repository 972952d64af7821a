import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';

t.test('alert words: list, add, remove, errors', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');

  t.same((await s.api('GET', '/users/me/alert_words', alice)).body, { result: 'success', msg: '', alert_words: [] });

  const added = await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['Pineapple', 'pineapple', ' coffee ', 'Big Deal', '  ', ''] });
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.same(added.body.alert_words, ['pineapple', 'coffee', 'Big Deal'], 'kept as typed and in order, trimmed, blanks dropped; the last spelling of a word wins');
  const again = await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['PINEAPPLE', 'tea'] });
  t.same(again.body.alert_words, ['pineapple', 'coffee', 'Big Deal', 'tea'], 'a word already there in any case is not added again');
  t.same((await s.api('GET', '/users/me/alert_words', alice)).body.alert_words, ['pineapple', 'coffee', 'Big Deal', 'tea']);
  t.same((await s.api('GET', '/users/me/alert_words', bob)).body.alert_words, [], 'alert words are per user');

  const removed = await s.api('DELETE', '/users/me/alert_words', alice, { alert_words: ['COFFEE', 'big deal', 'not there'] });
  t.equal(removed.status, 200);
  t.same(removed.body.alert_words, ['pineapple', 'tea'], 'removal ignores case');
  const padded = await s.api('DELETE', '/users/me/alert_words', alice, { alert_words: [' tea '] });
  t.same(padded.body.alert_words, ['pineapple', 'tea'], 'words to remove are not trimmed');

  const long = await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['fine', 'x'.repeat(101)] });
  t.equal(long.status, 400);
  t.equal(long.body.msg, 'alert_words[1] is too long (limit: 100 characters)');
  const longPadded = await s.api('POST', '/users/me/alert_words', alice, { alert_words: [` ${'x'.repeat(100)}`] });
  t.equal(longPadded.status, 400, 'the limit counts the word as sent, before trimming');
  const notList = await s.api('POST', '/users/me/alert_words', alice, { alert_words: '"word"' });
  t.equal(notList.status, 400);
  const missing = await s.api('POST', '/users/me/alert_words', alice, {});
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  const notJson = await s.api('DELETE', '/users/me/alert_words', alice, { alert_words: '[oops' });
  t.equal(notJson.status, 400);
  t.same((await s.api('GET', '/users/me/alert_words', alice)).body.alert_words, ['pineapple', 'tea'], 'refused requests change nothing');
  t.equal((await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['y'.repeat(100)] })).status, 200, '100 characters is fine');
});

t.test('alert_words events keep the registered state equal to a fresh one', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: ['alert_words'], fetch_event_types: ['alert_words'] };

  const reg = await s.api('POST', '/register', alice, register);
  t.same(reg.body.alert_words, []);
  const add = await verifyAction(t, s, alice, () => s.api('POST', '/users/me/alert_words', alice, { alert_words: ['Zeta', 'alpha'] }), { register });
  t.same(add.map(({ id: _id, ...e }) => e), [{ type: 'alert_words', alert_words: ['Zeta', 'alpha'] }], 'the event carries the whole list');
  const none = await verifyAction(t, s, alice, () => s.api('POST', '/users/me/alert_words', alice, { alert_words: ['ALPHA'] }), { register });
  t.same(none.map((e) => e.alert_words), [['Zeta', 'alpha']], 'a request that changes nothing still sends the list');
  await verifyAction(t, s, alice, () => s.api('DELETE', '/users/me/alert_words', alice, { alert_words: ['zeta'] }), {
    register,
    expect: (events) => t.same(events.map((e) => e.alert_words), [['alpha']]),
  });
  const nothing = await verifyAction(t, s, alice, () => s.api('DELETE', '/users/me/alert_words', alice, { alert_words: ['gone'] }), { register });
  t.same(nothing.map((e) => e.alert_words), [['alpha']], 'removing a word that is not there sends the list too');
  const other = await verifyAction(t, s, bob, () => s.api('POST', '/users/me/alert_words', alice, { alert_words: ['beta'] }), { register });
  t.same(other, [], "another user's alert words are not sent to Bob");
});

t.test('a message with an alert word is flagged for that recipient and found by is:alerted', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channel = await createChannel(s, alice, 'fruit', { subscribers: [alice.id, bob.id] });
  await s.api('POST', '/users/me/alert_words', bob, { alert_words: ['Pineapple'] });

  const send = async (content: string) => {
    const res = await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 'lunch', content });
    t.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as number;
  };
  const plain = await send('apples only');
  const alerted = await send('Who wants PINEAPPLE pizza?');

  const fetched = await s.api('GET', `/messages/${alerted}`, bob);
  t.ok(fetched.body.message.flags.includes('has_alert_word'), 'flagged for Bob');
  t.notOk(fetched.body.message.content.includes('alert'), 'nothing visible in the rendered content');
  const forAlice = await s.api('GET', `/messages/${alerted}`, alice);
  t.notOk(forAlice.body.message.flags.includes('has_alert_word'), 'not for Alice, who has no such word');

  const narrowed = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'alerted' }] });
  t.equal(narrowed.status, 200);
  t.same(narrowed.body.messages.map((m: any) => m.id), [alerted]);
  t.notOk(narrowed.body.messages.some((m: any) => m.id === plain));
});

t.test("alert words match as the real server's do: between its punctuation only, and the sender's own messages too", async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channel = await createChannel(s, alice, 'words', { subscribers: [alice.id, bob.id] });
  await s.api('POST', '/users/me/alert_words', bob, { alert_words: ['one'] });
  const flagged = async (who: typeof alice, content: string) => {
    const id = (await s.api('POST', '/messages', who, { type: 'stream', to: channel, topic: 't', content })).body.id as number;
    return ((await s.api('GET', `/messages/${id}`, bob)).body.message.flags as string[]).includes('has_alert_word');
  };
  for (const content of ['one', 'Number one!', '(one)', "'one'", 'so, one; two', '*one*', '> one', 'one?']) t.ok(await flagged(alice, content), content);
  for (const content of ['http://t.co/one/', '#one', 'x-one', '@one', 'one-off', 'ones', 'someone']) t.notOk(await flagged(alice, content), content);
  t.ok(await flagged(bob, 'my own one'), "the sender's own message");
});
