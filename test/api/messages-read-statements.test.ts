import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel } from '../helpers/typing-fixture.js';
import { statementCounter as countStatements } from '../helpers/statement-counter.js';
import { PREPARED_MARK } from '../../src/db/prepared.js';

// Statements over the tables a history read touches; background work (log, queues) is not counted.
const READ_TABLES = /\b(messages|message_flags|message_read_state|message_reception_spans|message_moved_receptions|reactions|submessages|users|streams|subscriptions)\b/;
const statementCounter = (s: TestServer) => countStatements(s, (text) => READ_TABLES.test(text));

async function send(s: TestServer, as: TestUser, content: string): Promise<number> {
  const r = await s.api('POST', '/messages', as, { type: 'stream', to: 'plans', topic: 'q3', content });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.id;
}

t.test('GET /messages answers a channel + topic window in at most three statements', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channelId = await createChannel(s, alice, 'plans', { subscribers: [alice.id, bob.id] });
  const ids: number[] = [];
  for (let i = 0; i < 12; i++) ids.push(await send(s, i % 2 === 0 ? alice : bob, `point ${i}`));
  for (const [id, who] of [[ids[1]!, alice], [ids[1]!, bob], [ids[7]!, bob]] as const) {
    const r = await s.api('POST', `/messages/${id}/reactions`, who, { emoji_name: 'octopus' });
    t.equal(r.status, 200);
  }
  t.equal((await s.api('POST', '/messages/flags', bob, { messages: [ids[4]], op: 'add', flag: 'starred' })).status, 200);
  const narrow = [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: 'q3' }];

  const counter = statementCounter(s);
  t.teardown(() => counter.restore());
  const counts: number[] = [];
  let body: any;
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = counter.count();
    const r = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    counts.push(counter.count() - before);
    t.equal(r.status, 200);
    body = r.body;
  }
  counter.restore();
  // The channel with the viewer's subscription, the window, its extras with the viewer's read mark
  // (senders come from the process's cache once read).
  t.ok(Math.min(...counts) <= 3, `statements per read: ${counts.join(', ')}`);

  const messages = body.messages as Array<Record<string, any>>;
  t.same(messages.map((m) => m.id), ids, 'the whole topic, oldest first');
  t.same(messages.map((m) => m.display_recipient), ids.map(() => 'plans'));
  t.same(messages[1]!.reactions.map((r: any) => r.user_id), [alice.id, bob.id], 'reactions in the order they were added');
  t.same(messages[7]!.reactions.map((r: any) => [r.emoji_name, r.user.full_name]), [['octopus', 'Bob']]);
  t.ok(messages[4]!.flags.includes('starred'), 'the viewer\'s flags');
  t.notOk(messages[5]!.flags.includes('starred'));
  t.same(messages.map((m) => m.sender_full_name), ids.map((_, i) => (i % 2 === 0 ? 'Alice' : 'Bob')));

  // A renamed sender shows under the new name at once: cached user rows last only while the table is unchanged.
  t.equal((await s.api('PATCH', '/settings', alice, { full_name: 'Alice Renamed' })).status, 200);
  const after = await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 100, num_after: 0, narrow });
  t.same(after.body.messages.map((m: any) => m.sender_full_name), ids.map((_, i) => (i % 2 === 0 ? 'Alice Renamed' : 'Bob')));
  t.same(after.body.messages[1].reactions.map((r: any) => r.user.full_name), ['Alice Renamed', 'Bob']);
});

t.test('GET /messages reads one content column, and its look-ups as prepared statements', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const channelId = await createChannel(s, alice, 'plans', { subscribers: [alice.id] });
  const id = await send(s, alice, 'a **bold** plan');
  const narrow = [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: 'q3' }];

  const texts: string[] = [];
  const counter = countStatements(s, (text) => {
    if (READ_TABLES.test(text)) texts.push(text);
    return false;
  });
  t.teardown(() => counter.restore());
  const read = async (query: Record<string, unknown>) => {
    texts.length = 0;
    const r = await s.api('GET', '/messages', alice, { anchor: 'newest', num_before: 10, num_after: 0, narrow, ...query });
    t.equal(r.status, 200);
    return { messages: r.body.messages as Array<Record<string, any>>, texts: [...texts] };
  };
  const windowOf = (list: string[]) => list.filter((text) => /FROM messages m WHERE/.test(text) && /ORDER BY m\.id DESC/.test(text));

  const html = await read({});
  t.same(html.messages.map((m) => [m.id, m.content]), [[id, '<p>a <strong>bold</strong> plan</p>']]);
  t.equal(windowOf(html.texts).length, 1, 'one window statement');
  t.match(windowOf(html.texts)[0], /m\.rendered_content/);
  t.notMatch(windowOf(html.texts)[0], /m\.content\b/, 'the raw content stays in the database');

  const raw = await read({ apply_markdown: false });
  t.same(raw.messages.map((m) => [m.id, m.content, m.content_type]), [[id, 'a **bold** plan', 'text/x-markdown']]);
  t.match(windowOf(raw.texts)[0], /m\.content\b/);
  t.notMatch(windowOf(raw.texts)[0], /m\.rendered_content/, 'the rendered content stays in the database');

  const search = await read({ apply_markdown: false, narrow: [...narrow, { operator: 'search', operand: 'bold' }] });
  t.equal(search.messages[0]!.content, 'a **bold** plan');
  t.match(search.messages[0]!.match_content, /<span class="highlight">bold<\/span>/, 'a search highlights the rendered content');

  // The channel and the window's extras are looked up by key: parsed and planned once per connection.
  const lookups = html.texts.filter((text) => /FROM streams st WHERE st\.realm_id|FROM message_flags f WHERE/.test(text));
  t.equal(lookups.length, 2, lookups.join('\n'));
  for (const text of lookups) t.ok(text.startsWith(PREPARED_MARK), text.slice(0, 80));
  counter.restore();
});

t.test('repeated reads of a channel look it up once while channels and subscriptions stay unchanged, and see a change at once', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.ADMINISTRATOR, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const channelId = await createChannel(s, alice, 'plans', { subscribers: [alice.id, bob.id] });
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) ids.push(await send(s, alice, `point ${i}`));
  const narrow = [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: 'q3' }];
  const lookUps = countStatements(s, (text) => /FROM streams st WHERE st\.realm_id/.test(text));
  t.teardown(() => lookUps.restore());
  const read = async (who: TestUser) => {
    const r = await s.api('GET', '/messages', who, { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    t.equal(r.status, 200);
    return (r.body.messages as Array<{ id: number }>).map((m) => m.id);
  };

  for (let i = 0; i < 3; i++) t.same(await read(bob), ids, `bob's read ${i + 1}`);
  t.equal(lookUps.count(), 1, 'one look-up of the channel for three reads by the same viewer');
  t.same(await read(carol), ids, 'a public channel\'s history, read by a member who is not subscribed');
  t.equal(lookUps.count(), 2, 'another viewer: a look-up of its own (the subscription is the viewer\'s)');

  t.equal((await s.api('PATCH', `/streams/${channelId}`, alice, { is_private: true, history_public_to_subscribers: true })).status, 200);
  t.same(await read(carol), [], 'made private: at once, nothing for someone not subscribed');
  t.equal(lookUps.count(), 3, 'the channel changed: looked up again');
  t.equal((await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: JSON.stringify([{ name: 'plans' }]), principals: JSON.stringify([carol.id]) })).status, 200);
  t.same(await read(carol), ids, 'subscribed: at once, the history shared with subscribers');
  t.equal(lookUps.count(), 4, 'the subscriptions changed: looked up again');
});
