import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';
import { statementCounter } from '../helpers/statement-counter.js';

async function send(s: TestServer, as: TestUser, to: unknown, content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await s.api('POST', '/messages', as, { type: typeof to === 'string' ? 'stream' : 'private', to, topic: 'lunch', content, ...extra });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.id;
}

async function submessagesOf(s: TestServer, as: TestUser, id: number) {
  const r = await s.api('GET', '/messages', as, { anchor: id, num_before: 0, num_after: 0 });
  return r.body.messages[0].submessages as Array<Record<string, any>>;
}

const submit = (s: TestServer, as: TestUser, id: number, content: unknown, msgType = 'widget') =>
  s.api('POST', '/submessage', as, { message_id: id, msg_type: msgType, content: typeof content === 'string' ? content : JSON.stringify(content) });

t.test('a /poll or /todo message gets its widget as the real server parses it', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'food', { subscribers: [alice.id, bob.id] });

  let pollId = 0;
  const events = await verifyAction(t, s, bob, async () => {
    pollId = await send(s, alice, 'food', '/poll What for lunch?\n- Pizza\n* Pasta\n  Salad  \n\n1. Soup');
  }, { register: { event_types: ['message'] } });
  const widget = { widget_type: 'poll', extra_data: { question: 'What for lunch?', options: ['Pizza', 'Pasta', 'Salad', '1. Soup'] } };
  t.equal(events.length, 1);
  t.same(events[0]!.message.submessages.map((m: any) => ({ ...m, content: JSON.parse(m.content) })),
    [{ msg_type: 'widget', content: widget, message_id: pollId, sender_id: alice.id, id: events[0]!.message.submessages[0].id }], 'the message event carries the widget');
  const fetched = await submessagesOf(s, bob, pollId);
  t.same(fetched, events[0]!.message.submessages, 'GET /messages shows the same');

  const todoId = await send(s, alice, 'food', '/todo Groceries\n- milk: two liters\n- eggs\n- 10:30 standup');
  t.same(JSON.parse((await submessagesOf(s, alice, todoId))[0]!.content),
    { widget_type: 'todo', extra_data: { task_list_title: 'Groceries', tasks: [{ task: 'milk', desc: 'two liters' }, { task: 'eggs', desc: '' }, { task: '10:30 standup', desc: '' }] } },
    'a description follows the first ": "');
  // Leading line breaks are not part of a message (the real server strips them), so this is a poll.
  const late = await send(s, alice, 'food', '\n\n/poll Q\nA');
  t.same(JSON.parse((await submessagesOf(s, alice, late))[0]!.content), { widget_type: 'poll', extra_data: { question: 'Q', options: ['A'] } });
  const empty = await send(s, alice, 'food', '/poll');
  t.same(JSON.parse((await submessagesOf(s, alice, empty))[0]!.content), { widget_type: 'poll', extra_data: { question: '', options: [] } });
  for (const plain of ['hello /poll', '/polls are fun', '/unknown thing']) {
    t.same(await submessagesOf(s, alice, await send(s, alice, 'food', plain)), [], `${plain}: no widget`);
  }
});

t.test('POST /submessage: votes, options, questions, tasks, strikes, with the real server checks', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, alice, 'food', { subscribers: [alice.id, bob.id] });
  const poll = await send(s, alice, 'food', '/poll Lunch?\nPizza\nPasta');

  // A vote from another reader reaches every reader; the sender's queue folds it into nothing registered.
  const events = await verifyAction(t, s, alice, async () => {
    const r = await submit(s, bob, poll, { type: 'vote', key: 'canned,0', vote: 1 });
    t.same([r.status, r.body.result], [200, 'success']);
  }, { register: { event_types: ['submessage'] } });
  t.equal(events.length, 1);
  t.same({ ...events[0], id: 0, submessage_id: 0 }, { type: 'submessage', msg_type: 'widget', message_id: poll, sender_id: bob.id, content: '{"type":"vote","key":"canned,0","vote":1}', id: 0, submessage_id: 0 });
  t.same((await submessagesOf(s, alice, poll)).map((m) => m.sender_id), [alice.id, bob.id]);

  t.equal((await submit(s, bob, poll, { type: 'new_option', option: 'Tacos', idx: 1 })).status, 200);
  const bad = async (as: TestUser, id: number, content: unknown, msg: string) => {
    const r = await submit(s, as, id, content);
    t.same([r.status, r.body.result, r.body.msg, r.body.code], [400, 'error', msg, 'BAD_REQUEST'], msg);
  };
  await bad(bob, poll, { type: 'question', question: 'Dinner?' }, "You can't edit a question unless you are the author.");
  t.equal((await submit(s, alice, poll, { type: 'question', question: 'Dinner?' })).status, 200, 'the author edits the question');
  await bad(bob, poll, '{not json', 'Invalid json for submessage');
  await bad(bob, poll, { type: 'vote', key: 'x', vote: 2 }, 'Invalid poll data["vote"]');
  await bad(bob, poll, { type: 'vote', key: 'x' }, 'vote key is missing from poll data');
  await bad(bob, poll, { type: 'vote', key: 1, vote: 1 }, 'poll data["key"] is not a string');
  await bad(bob, poll, { type: 'vote', key: 'x', vote: 1, extra: true }, 'Unexpected arguments: extra');
  await bad(bob, poll, { type: 'launch' }, 'Unknown type for poll data: launch');
  await bad(bob, poll, [1], 'poll data is not a dict');
  await bad(bob, poll, { kind: 'vote' }, 'type key is missing from poll data');
  // Option indexes and task keys run from 0 to the real server's MAX_IDX, 1000.
  await bad(bob, poll, { type: 'new_option', option: 'Pie', idx: -1 }, 'poll data["idx"] is too small');
  await bad(bob, poll, { type: 'new_option', option: 'Pie', idx: 1001 }, 'poll data["idx"] is too large');
  t.equal((await submit(s, bob, poll, { type: 'new_option', option: 'Pie', idx: 1000 })).status, 200);
  // Not visible to Carol (she is not subscribed to... a public channel's message is visible); a DM is not.
  const dm = await send(s, alice, [bob.id], '/todo Chores\n- dishes');
  await bad(carol, dm, { type: 'strike', key: '0,canned' }, 'Invalid message(s)');
  await bad(bob, 999_999, { type: 'strike', key: '0,canned' }, 'Invalid message(s)');
  t.equal((await submit(s, bob, dm, { type: 'strike', key: '0,canned' })).status, 200);
  t.equal((await submit(s, bob, dm, { type: 'new_task', key: 1, task: 'laundry', desc: '', completed: false })).status, 200);
  await bad(bob, dm, { type: 'new_task', key: 1, task: 'laundry', completed: false }, 'desc key is missing from todo data');
  await bad(bob, dm, { type: 'new_task', key: -1, task: 'eat', desc: '', completed: false }, 'todo data["key"] is too small');
  await bad(bob, dm, { type: 'new_task', key: 1001, task: 'eat', desc: '', completed: false }, 'todo data["key"] is too large');
  await bad(bob, dm, { type: 'strike', key: 3 }, 'todo data["key"] is not a string');
  await bad(bob, dm, { type: 'vote', key: 'x', vote: 1 }, 'Unknown type for todo data: vote');
  // Only after its sender may others attach to a message.
  const plain = await send(s, alice, 'food', 'just text');
  await bad(bob, plain, { anything: 1 }, 'You cannot attach a submessage to this message.');
  t.equal((await submit(s, alice, plain, { anything: 1 }, 'other')).status, 200, 'the sender may');
  t.equal((await submit(s, bob, plain, { anything: 2 }, 'other')).status, 200, 'then anyone who sees it');
  t.equal((await s.api('POST', '/submessage', bob, { message_id: poll, msg_type: 'widget' })).body.code, 'REQUEST_VARIABLE_MISSING');

  // Carol, outside the direct message, never hears of its submessages.
  const outsider = await verifyAction(t, s, carol, () => submit(s, bob, dm, { type: 'strike', key: '1,canned' }), { register: { event_types: ['submessage'] } });
  t.same(outsider, []);
});

t.test('widget_content: the real server accepts a bot zform and refuses the rest', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Helper', { bot_type: 1, bot_owner_id: alice.id });
  await createChannel(s, alice, 'help', { subscribers: [alice.id, bot.id] });
  const zform = { widget_type: 'zform', extra_data: { type: 'choices', heading: 'Pick', choices: [{ short_name: 'A', long_name: 'Apple', reply: 'apple' }] } };
  const id = await send(s, bot, 'help', 'Choose one', { widget_content: JSON.stringify(zform) });
  t.same(JSON.parse((await submessagesOf(s, alice, id))[0]!.content), zform);
  const refused = async (content: string, msg: string) => {
    const r = await s.api('POST', '/messages', bot, { type: 'stream', to: 'help', topic: 't', content: 'x', widget_content: content });
    t.same([r.status, r.body.msg], [400, msg], msg);
  };
  await refused('{nope', 'Widgets: API programmer sent invalid JSON content');
  await refused('[]', 'Widgets: widget_content is not a dict');
  await refused('{"extra_data":{}}', 'Widgets: widget_type is not in widget_content');
  await refused('{"widget_type":"poll","extra_data":{}}', 'Widgets: unknown widget type: poll');
  // The zform is checked as the real server's check_dict names it: extra_data, then its keys in order.
  const form = (extra: Record<string, unknown>) => JSON.stringify({ widget_type: 'zform', extra_data: { type: 'choices', ...extra } });
  await refused(form({}), 'Widgets: heading key is missing from extra_data');
  await refused(form({ heading: 'h' }), 'Widgets: choices key is missing from extra_data');
  await refused(form({ heading: 5, choices: [] }), 'Widgets: extra_data["heading"] is not a string');
  await refused(form({ heading: 'h', choices: 99 }), 'Widgets: extra_data["choices"] is not a list');
  await refused(form({ heading: 'h', choices: [99] }), 'Widgets: extra_data["choices"][0] is not a dict');
  await refused(form({ heading: 'h', choices: [{ long_name: 'foo', reply: 'bar' }] }), 'Widgets: short_name key is missing from extra_data["choices"][0]');
  await refused(form({ heading: 'h', choices: [{ short_name: 1, long_name: 'foo', reply: 'bar' }] }), 'Widgets: extra_data["choices"][0]["short_name"] is not a string');
});

t.test('50 concurrent votes on one poll: every one counted, and each in its voter\'s next read', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const voters: TestUser[] = [];
  for (let i = 0; i < 50; i++) voters.push(await s.user(Role.MEMBER, `Voter ${i}`));
  await createChannel(s, alice, 'votes', { subscribers: [alice.id, ...voters.map((v) => v.id)] });
  const poll = await send(s, alice, 'votes', '/poll Where?\n- Kitchen\n- Roof\n- Lobby\n- Park\n- Online');
  const queue = await s.api('POST', '/register', alice, { event_types: ['submessage'] });

  const seen = await Promise.all(voters.map(async (voter, i) => {
    const content = JSON.stringify({ type: 'vote', key: `canned,${i % 5}`, vote: 1 });
    const r = await submit(s, voter, poll, content);
    if (r.status !== 200) return `${voter.email}: ${r.status} ${JSON.stringify(r.body)}`;
    // Read-your-writes: the voter's next read, right after the answer, shows the vote.
    const mine = (await submessagesOf(s, voter, poll)).filter((m) => m.sender_id === voter.id);
    return mine.length === 1 && mine[0]!.content === content ? 'ok' : `${voter.email}: ${JSON.stringify(mine)}`;
  }));
  t.same(seen.filter((r) => r !== 'ok'), [], 'every vote answered 200 and was in its voter\'s next read');

  const all = await submessagesOf(s, alice, poll);
  t.equal(all.length, 51, 'the widget and 50 votes');
  t.same(new Set(all.slice(1).map((m) => m.sender_id)), new Set(voters.map((v) => v.id)), 'one vote from each voter');
  t.equal(new Set(all.map((m) => m.id)).size, 51, 'distinct submessage ids');
  const logged = await s.platform.db.selectFrom('events').select('stream_version').where('stream_id', '=', `submessages-${poll}`).orderBy('stream_version').execute();
  t.same(logged.map((e) => e.stream_version), Array.from({ length: 50 }, (_, i) => i + 1), 'one event per vote on the message\'s stream, versions without gaps');
  const polled = await s.api('GET', '/events', alice, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id, dont_block: true });
  t.equal(polled.body.events.filter((e: { type: string }) => e.type === 'submessage').length, 50, 'every vote reached the author\'s queue');
});

t.test('a vote reads the message, its visibility, the poll and a new id in one statement', async (t) => {
  // No retention job: its look-up of channels would be counted if it ran during a vote.
  const s = await startTestServer(t, { forgettingIntervalSeconds: 0 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const voters = [await s.user(Role.MEMBER, 'Bob'), await s.user(Role.MEMBER, 'Carol')];
  await createChannel(s, alice, 'food', { subscribers: [alice.id, ...voters.map((u) => u.id)] });
  const poll = await send(s, alice, 'food', '/poll Lunch?\nPizza\nPasta');
  // The reads the checks make, as the query builder writes them (the fold's insert, the log and
  // the event queues' audience look-ups, written by hand, are not counted).
  const CHECKED = /"(messages|submessages|streams|subscriptions|message_reception_spans|message_moved_receptions)"|nextval/;
  const seen: string[] = [];
  const counter = statementCounter(s, (text) => {
    const counted = CHECKED.test(text) && !/^\s*(\/\*.*?\*\/\s*)?(insert|update|delete)\b/i.test(text);
    if (counted) seen.push(text.slice(0, 120));
    return counted;
  });
  t.teardown(() => counter.restore());
  for (const [i, voter] of voters.entries()) {
    seen.length = 0;
    const r = await submit(s, voter, poll, { type: 'vote', key: `canned,${i}`, vote: 1 });
    t.same([r.status, r.body.result], [200, 'success']);
    t.same(seen.length, 1, `vote ${i + 1}: one statement before the append`, { seen });
  }
  counter.restore();
  const votes = (await submessagesOf(s, alice, poll)).filter((m) => JSON.parse(m.content).type === 'vote');
  t.same(votes.map((m) => m.sender_id), voters.map((u) => u.id), 'both votes are there');
});

t.test('concurrent votes share one look-up of the message, each still checked as its own viewer', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const members: TestUser[] = [];
  for (let i = 0; i < 6; i++) members.push(await s.user(Role.MEMBER, `Member ${i}`));
  const outsiders = [await s.user(Role.MEMBER, 'Outsider A'), await s.user(Role.MEMBER, 'Outsider B')];
  await createChannel(s, alice, 'secret', { subscribers: [alice.id, ...members.map((u) => u.id)], invite_only: true });
  const poll = await send(s, alice, 'secret', '/poll Where?\n- Kitchen\n- Roof');
  const counter = statementCounter(s, (text) => /"messages" as "m"/.test(text));
  t.teardown(() => counter.restore());
  const voters = [members[0]!, outsiders[0]!, ...members.slice(1, 4), outsiders[1]!, ...members.slice(4)];
  const answers = await Promise.all(voters.map((voter, i) => submit(s, voter, poll, { type: 'vote', key: `canned,${i % 2}`, vote: 1 })));
  const lookUps = counter.count();
  counter.restore();
  t.same(answers.map((r) => r.status), voters.map((v) => (outsiders.includes(v) ? 400 : 200)), 'members vote; those who cannot see the message are refused');
  t.same(answers.filter((r) => r.status === 400).map((r) => r.body.msg), ['Invalid message(s)', 'Invalid message(s)'], 'with the real server\'s error');
  t.ok(lookUps >= 1 && lookUps < voters.length, `${voters.length} votes made ${lookUps} look-ups of the message`);
  const votes = (await submessagesOf(s, alice, poll)).filter((m) => JSON.parse(m.content).type === 'vote');
  t.same(votes.map((m) => m.sender_id).sort(), members.map((u) => u.id).sort(), 'one vote from each member, none from an outsider');
  t.equal(new Set(votes.map((m) => m.id)).size, members.length, 'distinct submessage ids');
});
