import t from 'tap';
import { startTestServer, Role, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

// Reading messages by the real server's rules (found by replaying test_message_fetch.py): who reaches one
// message by its id, whose history a narrow reads, and how a narrow or a window is refused.

// Web-public channels need the server setting and the organization's spectator access.
const shared = startTestServer(t, { webPublicStreamsEnabled: true });
const ids = (r: { body: any }) => (r.body.messages ?? []).map((m: { id: number }) => m.id);
const refused = { status: 400, body: { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' } };

t.test('one message by its id: reading rights now, not once', async (t) => {
  const s = await shared;
  await setRealmProperties(s, { enable_spectator_access: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const guest = await s.user(Role.GUEST, 'Guest');
  await createChannel(s, alice, 'id-protected', [bob], { invite_only: true, history_public_to_subscribers: false });
  await createChannel(s, alice, 'id-shared', [bob], { invite_only: true, history_public_to_subscribers: true });
  await createChannel(s, alice, 'id-public', [bob, guest]);
  await createChannel(s, s.owner, 'id-web-public', [alice], { is_web_public: true });
  const secret = await sendStream(s, alice, 'id-protected', 't', 'protected');
  const sharedMessage = await sendStream(s, alice, 'id-shared', 't', 'shared');
  const open = await sendStream(s, alice, 'id-public', 't', 'public');
  const web = await sendStream(s, alice, 'id-web-public', 't', 'web-public');
  const byId = (user: TestUser, id: number, suffix = '') => s.api('GET', `/messages/${id}${suffix}`, user);

  t.equal((await byId(bob, secret)).status, 200, 'a subscriber who received it');
  await unsubscribe(s, bob, 'id-protected', [bob]);
  await unsubscribe(s, bob, 'id-shared', [bob]);
  for (const id of [secret, sharedMessage]) {
    for (const suffix of ['', '/history', '/read_receipts']) t.match(await byId(bob, id, suffix), refused, `a former subscriber: ${id}${suffix}`);
  }
  const narrowed = (user: TestUser, narrow: unknown[]) => s.api('GET', '/messages', user, { anchor: 'newest', num_before: 10, num_after: 0, narrow });
  t.same(ids(await narrowed(bob, [{ operator: 'channel', operand: 'id-protected' }])), [secret], 'GET /messages still shows a former subscriber what they received');
  t.same(ids(await narrowed(bob, [{ operator: 'channel', operand: 'id-shared' }])), [sharedMessage]);

  await subscribe(s, alice, 'id-shared', [bob]);
  t.equal((await byId(bob, sharedMessage)).status, 200, 'shared history: a subscriber again');
  await subscribe(s, alice, 'id-protected', [carol]);
  t.match(await byId(carol, secret), refused, 'protected history: subscribed now, but never received it');

  t.same((await byId(eve, open)).body.message?.flags, ['read', 'historical'], 'a public channel: any member');
  await unsubscribe(s, guest, 'id-public', [guest]);
  t.match(await byId(guest, open), refused, 'a guest who left a public channel');
  t.same(ids(await narrowed(guest, [{ operator: 'sender', operand: alice.id }])), [open], 'which stays in their history');
  t.match(await byId(guest, web), refused, 'a guest, not subscribed, even to a web-public channel');
  t.same(ids(await narrowed(guest, [{ operator: 'channel', operand: 'id-web-public' }])), [web], 'whose channel view a guest may read');

  const dm = await sendDm(s, alice, [bob], 'just us');
  t.equal((await byId(bob, dm)).status, 200);
  t.match(await byId(eve, dm), refused, 'a direct message: its participants only');
});

t.test('GET /messages: which narrows read a whole history, and which only what the user received', async (t) => {
  const s = await shared;
  await setRealmProperties(s, { enable_spectator_access: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const guest = await s.user(Role.GUEST, 'Guest');
  await createChannel(s, alice, 'h-public', [bob, guest]);
  await createChannel(s, s.owner, 'h-web-public', [alice], { is_web_public: true });
  const open = await sendStream(s, alice, 'h-public', 'plans', 'public words');
  const resolved = await sendStream(s, alice, 'h-public', '✔ done', 'finished');
  const web = await sendStream(s, alice, 'h-web-public', 't', 'web words');
  const dm = await sendDm(s, alice, [eve], 'no topic here');
  const fetch = async (user: TestUser, narrow: unknown[]) => {
    const r = await s.api('GET', '/messages', user, { anchor: 'newest', num_before: 50, num_after: 0, narrow });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return ids(r).filter((id: number) => id >= open);
  };

  t.same(await fetch(eve, [{ operator: 'channels', operand: 'public' }]), [open, resolved, web], 'channels:public: every public channel, for a member');
  t.same(await fetch(guest, [{ operator: 'channels', operand: 'public' }]), [open, resolved], 'for a guest only what they received');
  t.same(await fetch(eve, [{ operator: 'channels', operand: 'web-public' }]), [], 'channels:web-public: what the member received');
  t.same(await fetch(eve, [{ operator: 'channel', operand: 'h-public' }, { operator: 'is', operand: 'resolved' }]), [resolved], 'is:resolved keeps the history');
  t.same(await fetch(eve, [{ operator: 'channel', operand: 'h-public' }, { operator: 'is', operand: 'starred', negated: true }]), [],
    'any other is: term reads only what the user received');
  t.same(await fetch(eve, [{ operator: 'topic', operand: '' }]), [], 'a direct message has no topic, not an empty one');
  t.same(await fetch(eve, [{ operator: 'topic', operand: '', negated: true }]), [dm]);

  // GET /messages/matches_narrow: only messages the user received can match.
  const matches = (user: TestUser) => s.api('GET', '/messages/matches_narrow', user, { msg_ids: [open, web], narrow: [{ operator: 'channel', operand: 'h-public' }] });
  t.same((await matches(eve)).body.messages, {}, 'not received: no match, though the channel is public');
  t.same(Object.keys((await matches(bob)).body.messages), [String(open)]);
});

t.test('first_unread: the first unread message outside muted topics (and, outside a channel view, muted channels)', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const dave = await s.user(Role.MEMBER, 'Dave');
  const quiet = await createChannel(s, alice, 'fu-quiet', [dave]);
  const loud = await createChannel(s, alice, 'fu-loud', [dave]);
  t.equal((await s.api('POST', '/user_topics', dave, { stream_id: quiet, topic: 'hushed', visibility_policy: 1 })).status, 200);
  await sendStream(s, alice, 'fu-quiet', 'hushed', 'muted topic');
  const first = await sendStream(s, alice, 'fu-quiet', 'normal', 'not muted');
  const anchor = async (narrow: unknown[]) =>
    (await s.api('GET', '/messages', dave, { anchor: 'first_unread', num_before: 0, num_after: 0, narrow })).body.anchor;
  t.equal(await anchor([]), first);
  t.equal(await anchor([{ operator: 'channel', operand: 'fu-quiet' }]), first);

  const mute = await s.api('POST', '/users/me/subscriptions/properties', dave, { subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }] });
  t.equal(mute.status, 200);
  const later = await sendStream(s, alice, 'fu-loud', 't', 'in a channel not muted');
  t.equal(await anchor([]), later, 'a muted channel is passed over in the combined view');
  t.equal(await anchor([{ operator: 'channel', operand: 'fu-quiet' }]), first, 'not in its own view');
  t.equal(await anchor([{ operator: 'channel', operand: loud }]), later);
});

t.test('a narrow of the wrong shape is refused in the real server words', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'shape', [bob]);
  const get = (narrow: unknown) => s.api('GET', '/messages', alice, { anchor: 'newest', num_before: 5, num_after: 0, narrow });
  const badRequest = (msg: string) => ({ status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
  const badNarrow = (msg: string) => ({ status: 400, body: { result: 'error', msg: `Invalid narrow operator: ${msg}`, code: 'BAD_NARROW' } });

  for (const [narrow, msg] of [
    ['{malformed json,', 'narrow is not valid JSON'],
    ['', 'narrow is not valid JSON'],
    ['0', 'narrow is not a list'],
    ['{}', 'narrow is not a list'],
    ['[1,2]', 'Invalid narrow[0]: Value error, dict or list required'],
    ['[["x","y","z"]]', 'Invalid narrow[0]: Value error, element is not a string pair'],
    ['[["channel",0]]', 'Invalid narrow[0]: Value error, element is not a string pair'],
    ['[{"operator":"channel"}]', 'Invalid narrow[0]: Value error, operand is missing'],
    ['[{"operand":"x"}]', 'Invalid narrow[0]: Value error, operator is missing'],
    ['[{"operator":"sender","operand":["1"]}]', 'Invalid narrow[0]: Value error, operand is not a string or integer'],
    ['[{"operator":"dm","operand":["2"]}]', 'Invalid narrow[0]: Value error, operand[0] is not an integer'],
    ['[{"operator":"is","operand":2}]', 'Invalid narrow[0]: Value error, operand is not a string'],
    ['[{"operator":"near","operand":[1]}]', 'Invalid narrow[0]: Value error, operand is not a string'],
    ['[{"operator":"topic","operand":5}]', 'Invalid narrow[0]: Value error, operand is not a string'],
    ['[{"operator":"search","operand":"  "}]', 'Invalid narrow[0]: Value error, operand cannot be blank.'],
    ['[{"operator":"topic","operand":"x","negated":"yes"}]', 'Invalid narrow[0]: Value error, negated is not a boolean'],
    ['[{"operator":"is","operand":"dm"},{"operator":"channel","operand":null}]', 'Invalid narrow[1]: Value error, operand is missing'],
  ] as const) t.match(await get(narrow), badRequest(msg), `narrow=${narrow}`);

  for (const operator of ['', 'foo', 'channel:shape', '__init__']) t.match(await get([{ operator, operand: '' }]), badNarrow(`unknown operator ${operator}`));
  t.match(await get([{ operator: 'id', operand: 'notanint' }]), badNarrow('Invalid message ID'));
  t.match(await get([{ operator: 'dm', operand: `${bob.email},nobody@example.com` }]), badNarrow(`unknown user in ${bob.email},nobody@example.com`));
  t.match(await get([{ operator: 'dm', operand: [bob.id, 999999] }]), badNarrow(`unknown user in [${bob.id}, 999999]`));

  const both = badNarrow('No message can be both a channel message and direct message');
  const dmBob = { operator: 'dm', operand: bob.email };
  t.match(await get([dmBob, { operator: 'topic', operand: 'x' }]), both, 'dm and topic');
  t.match(await get([dmBob, { operator: 'channels', operand: 'public' }]), both, 'dm and channels:public');
  t.match(await get([{ operator: 'is', operand: 'dm', negated: true }, dmBob]), both, 'not a direct message, and dm');
  t.equal((await get([{ operator: 'is', operand: 'dm', negated: true }, { operator: 'channels', operand: 'public' }])).status, 200);
  t.equal((await get([{ operator: 'is', operand: 'dm' }, { operator: 'channels', operand: 'public', negated: true }])).status, 200);

  // The operators older clients send with underscores, and an empty dm list (the user's own conversation).
  const toBob = await sendDm(s, alice, [bob], 'hello');
  const self = await sendDm(s, alice, [alice], 'note to self');
  t.same(ids(await get([{ operator: 'pm_with', operand: bob.email }])), [toBob]);
  t.equal((await get([{ operator: 'group_pm_with', operand: bob.email }])).status, 200);
  t.same(ids(await get([{ operator: 'dm', operand: [] }])), [self]);
});

t.test('the window: anchors held in range, and the anchor left out only at an end', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const get = (params: Record<string, unknown>) => s.api('GET', '/messages', alice, { narrow: '[]', ...params });
  const m1 = await sendDm(s, alice, [alice], 'one');
  const m2 = await sendDm(s, alice, [alice], 'two');

  const gap = { status: 400, body: { result: 'error', msg: 'The anchor can only be excluded at an end of the range', code: 'BAD_REQUEST' } };
  t.match(await get({ anchor: m1, num_before: 1, num_after: 1, include_anchor: false }), gap);
  const flagsNarrow = await s.api('POST', '/messages/flags/narrow', alice, { anchor: m1, num_before: 1, num_after: 1, include_anchor: false, narrow: '[]', op: 'add', flag: 'read' });
  t.match(flagsNarrow, gap, 'the same window rule for POST /messages/flags/narrow');
  t.same(ids(await get({ anchor: m2, num_before: 1, num_after: 0, include_anchor: false })), [m1], 'one side: fine');

  for (const name of ['num_before', 'num_after']) {
    t.match(await get({ anchor: 'newest', num_before: 0, num_after: 0, [name]: -1 }), { status: 400, body: { msg: `${name} is too small`, code: 'BAD_REQUEST' } });
  }
  const huge = await get({ anchor: '10000000000000001', num_before: 1, num_after: 0 });
  t.match(huge.body, { anchor: 10000000000000000, found_newest: true, found_anchor: false });
  t.same(ids(huge), [m2]);
  t.match((await get({ anchor: '1000000000000000000000000000000', num_before: 1, num_after: 0 })).body, { result: 'success', anchor: 10000000000000000 });
  t.match((await get({ anchor: '-5', num_before: 0, num_after: 1 })).body, { anchor: 0, found_oldest: true });
  t.match(await get({ anchor: 'abc', num_before: 1, num_after: 0 }), { status: 400, body: { msg: 'Invalid anchor', code: 'BAD_REQUEST' } });
});

t.test('search: several search terms are one search; a URL is one word; a quoted phrase matches as written', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, alice, 'search-room', []);
  const lunch = await sendStream(s, alice, 'search-room', 'meetings', 'discuss lunch after lunch');
  const reversed = await sendStream(s, alice, 'search-room', 'meetings', 'after that, lunch');
  const url = await sendStream(s, alice, 'search-room', 'urltest', 'https://google.com');
  const search = async (...operands: string[]) => {
    const narrow = [{ operator: 'channel', operand: 'search-room' }, ...operands.map((operand) => ({ operator: 'search', operand }))];
    const r = await s.api('GET', '/messages', alice, { anchor: 'oldest', num_before: 0, num_after: 10, narrow });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.messages as Array<{ id: number; match_content: string }>;
  };
  const both = await search('discuss', 'after');
  t.same(both.map((m) => m.id), [lunch], '"after" is a stop word, dropped from the one search, not a term matching nothing');
  t.match(both[0]!.match_content, /<span class="highlight">discuss<\/span>/);
  t.same((await search('https://google.com')).map((m) => m.id), [url]);
  t.same((await search('"after lunch"')).map((m) => m.id), [lunch]);
  t.same((await search('after lunch')).map((m) => m.id).sort(), [lunch, reversed].sort(), 'unquoted: the words in any order');
  t.same((await search('lunch')).map((m) => m.id), [lunch, reversed]);
});

t.test('with: the conversation of a message the user may reach, else the rest of the narrow if it names one', async (t) => {
  const s = await shared;
  const iago = await s.user(Role.MEMBER, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  await createChannel(s, iago, 'dev-team', [], { invite_only: true, history_public_to_subscribers: false });
  await createChannel(s, iago, 'with-public', [hamlet]);
  const secret = await sendStream(s, iago, 'dev-team', 'test', 'before hamlet');
  const open = await sendStream(s, hamlet, 'with-public', 'test', 'public');
  const dm = await sendDm(s, hamlet, [iago], 'direct');
  const get = (user: TestUser, narrow: unknown[]) => s.api('GET', '/messages', user, { anchor: 'oldest', num_before: 0, num_after: 10, narrow });
  const withSecret = { operator: 'with', operand: secret };

  const own = await get(iago, [{ operator: 'channel', operand: 'dev-team' }, { operator: 'topic', operand: 'other' }, withSecret]);
  t.same(ids(own), [secret], 'the message\'s own conversation replaces the channel and topic given');
  t.equal(own.body.messages[0].subject, 'test');
  t.same(ids(await get(iago, [withSecret])), [secret]);

  await subscribe(s, iago, 'dev-team', [hamlet]);
  t.same(ids(await get(hamlet, [{ operator: 'channel', operand: 'dev-team' }, { operator: 'topic', operand: 'test' }, withSecret])), [],
    'protected history: hamlet cannot reach it, so the channel and topic given stand');
  t.same(ids(await get(hamlet, [{ operator: 'channel', operand: 'with-public' }, { operator: 'topic', operand: 'test' }, withSecret])), [open]);
  t.same(ids(await get(hamlet, [{ operator: 'dm', operand: iago.email }, withSecret])), [dm]);
  const invalid = { status: 400, body: { msg: "Invalid narrow operator: Invalid 'with' operator", code: 'BAD_NARROW' } };
  t.match(await get(hamlet, [{ operator: 'channel', operand: 'dev-team' }, withSecret]), invalid, 'no topic: no conversation to fall back to');
  t.match(await get(hamlet, [{ operator: 'topic', operand: 'test' }, withSecret]), invalid);
  t.match(await get(hamlet, [withSecret]), invalid);
  t.match(await get(iago, [{ operator: 'channel', operand: 'dev-team' }, { operator: 'topic', operand: 'test' }, { operator: 'with', operand: '3.2' }]), invalid);
  t.match(await get(iago, [{ operator: 'channel', operand: 'dev-team' }, withSecret, { operator: 'topic', operand: 'test' }, { operator: 'with', operand: open }]),
    { status: 400, body: { msg: "Invalid narrow operator combination: Duplicate 'with' operators.", code: 'BAD_NARROW' } });
});
