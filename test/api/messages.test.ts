import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream, subscribe, unsubscribe } from '../helpers/channels-fixture.js';
import { validateListedMessage, validateSingleMessage } from '../helpers/openapi-message.js';

const newest = (narrow: unknown[] = [], extra: Record<string, unknown> = {}) => ({ anchor: 'newest', num_before: 100, num_after: 0, narrow, ...extra });

// One server per file (each start costs seconds); every test uses its own users and channels.
const shared = startTestServer(t);

t.test('send and read: fields, flags, OpenAPI schema', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'general', [bob]);

  const sent = await s.api('POST', '/messages', alice, { type: 'stream', to: 'general', topic: 'greetings', content: 'hello **world** @**Bob**' });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  t.type(sent.body.id, 'number');
  // `to` as an id, as a JSON list, and `type: channel` are accepted too.
  const byId = await s.api('POST', '/messages', alice, { type: 'channel', to: sid, topic: 'greetings', content: 'by id' });
  t.equal(byId.status, 200);
  const byList = await s.api('POST', '/messages', alice, { type: 'stream', to: JSON.stringify([sid]), topic: 'greetings', content: 'by list' });
  t.equal(byList.status, 200);

  const got = await s.api('GET', '/messages', bob, newest([{ operator: 'channel', operand: 'general' }]));
  t.equal(got.status, 200, JSON.stringify(got.body));
  t.equal(got.body.messages.length, 3);
  const m = got.body.messages[0];
  t.equal(m.id, sent.body.id);
  t.equal(m.type, 'stream');
  t.equal(m.stream_id, sid);
  t.equal(m.subject, 'greetings');
  t.match(m.content, /<strong>world<\/strong>/);
  t.equal(m.content_type, 'text/html');
  t.equal(m.display_recipient, 'general');
  t.equal(m.sender_id, alice.id);
  t.equal(m.sender_full_name, 'Alice');
  t.same(m.flags, ['mentioned']);
  t.same(m.reactions, []);
  t.equal(got.body.found_newest, true);
  t.equal(got.body.found_oldest, true);
  t.equal(got.body.found_anchor, false);
  t.equal(got.body.history_limited, false);
  for (const message of got.body.messages) t.ok(validateListedMessage(message), JSON.stringify(validateListedMessage.errors));

  const raw = await s.api('GET', '/messages', bob, newest([], { apply_markdown: false }));
  t.equal(raw.body.messages[0].content, 'hello **world** @**Bob**');
  t.equal(raw.body.messages[0].content_type, 'text/x-markdown');

  const own = await s.api('GET', '/messages', alice, newest());
  t.same(own.body.messages[0].flags, ['read'], 'the sender has read their own message');
  const unreadOwn = await s.api('POST', '/messages', alice, { type: 'stream', to: 'general', topic: 'greetings', content: 'draft-like', read_by_sender: false });
  t.same((await s.api('GET', `/messages/${unreadOwn.body.id}`, alice)).body.message.flags, [], 'read_by_sender: false leaves it unread');
  await s.api('DELETE', `/messages/${unreadOwn.body.id}`, alice);

  const single = await s.api('GET', `/messages/${sent.body.id}`, bob);
  t.equal(single.status, 200);
  t.equal(single.body.raw_content, 'hello **world** @**Bob**');
  t.ok(validateSingleMessage(single.body.message), JSON.stringify(validateSingleMessage.errors));
  const missing = await s.api('GET', '/messages/999999', bob);
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, 'Invalid message(s)');

  // DMs: ids or emails, JSON list or comma list.
  const dm = await sendDm(s, alice, [bob], 'secret');
  const dmByEmail = await s.api('POST', '/messages', bob, { type: 'private', to: alice.email, content: 'reply' });
  t.equal(dmByEmail.status, 200, JSON.stringify(dmByEmail.body));
  const dmGot = await s.api('GET', `/messages/${dm}`, bob);
  t.equal(dmGot.body.message.type, 'private');
  t.same(dmGot.body.message.display_recipient.map((u: { id: number }) => u.id).sort(), [alice.id, bob.id].sort());
  t.ok(validateSingleMessage(dmGot.body.message), JSON.stringify(validateSingleMessage.errors));
  const conv = await s.api('GET', '/messages', alice, newest([{ operator: 'dm', operand: [bob.id] }]));
  t.same(conv.body.messages.map((x: { id: number }) => x.id), [dm, dmByEmail.body.id]);
});

t.test('send errors and limits', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const guest = await s.user(Role.GUEST, 'Guest');
  const mod = await s.user(Role.MODERATOR, 'Mod');
  await createChannel(s, alice, 'open-1', []);
  await createChannel(s, s.owner, 'secret-1', [], { invite_only: true });
  await createChannel(s, s.owner, 'announce-1', [alice, mod], { stream_post_policy: 2 });
  await createChannel(s, s.owner, 'mods-1', [alice, mod], { stream_post_policy: 4 });

  const cases: Array<[Record<string, unknown>, string, string?]> = [
    [{ type: 'stream', to: 'open-1', topic: 't', content: '   ' }, 'Message must not be empty'],
    [{ type: 'stream', to: 'open-1', content: 'x' }, 'Missing topic'],
    [{ type: 'stream', to: 'nowhere', topic: 't', content: 'x' }, "Channel 'nowhere' does not exist", 'STREAM_DOES_NOT_EXIST'],
    [{ type: 'stream', to: '99999', topic: 't', content: 'x' }, "Channel with ID '99999' does not exist", 'STREAM_DOES_NOT_EXIST'],
    [{ type: 'stream', to: 'secret-1', topic: 't', content: 'x' }, "Not authorized to send to channel 'secret-1'"],
    [{ type: 'stream', to: 'announce-1', topic: 't', content: 'x' }, 'Only organization administrators can send to this channel.'],
    [{ type: 'private', to: JSON.stringify([99999]), content: 'x' }, 'Invalid user ID 99999'],
    [{ type: 'private', to: 'nobody@example.com', content: 'x' }, "Invalid email 'nobody@example.com'"],
    [{ type: 'bogus', to: 'open-1', topic: 't', content: 'x' }, 'Invalid type'],
  ];
  for (const [params, msg, code] of cases) {
    const r = await s.api('POST', '/messages', alice, params);
    t.equal(r.status, 400, msg);
    t.equal(r.body.msg, msg);
    t.equal(r.body.code, code ?? 'BAD_REQUEST');
  }
  const missingContent = await s.api('POST', '/messages', alice, { type: 'stream', to: 'open-1', topic: 't' });
  t.equal(missingContent.body.code, 'REQUEST_VARIABLE_MISSING');
  const guestPost = await s.api('POST', '/messages', guest, { type: 'stream', to: 'open-1', topic: 't', content: 'x' });
  t.equal(guestPost.body.msg, "Not authorized to send to channel 'open-1'", 'guests post only where subscribed');
  t.equal((await s.api('POST', '/messages', mod, { type: 'stream', to: 'mods-1', topic: 't', content: 'x' })).status, 200);
  t.equal((await s.api('POST', '/messages', alice, { type: 'stream', to: 'mods-1', topic: 't', content: 'x' })).body.msg,
    'Only organization administrators and moderators can send to this channel.');
  t.equal((await s.api('POST', '/messages', s.owner, { type: 'stream', to: 'announce-1', topic: 't', content: 'x' })).status, 200);

  // Over-long content and topics are truncated, as the real server does.
  const long = await s.api('POST', '/messages', alice, { type: 'stream', to: 'open-1', topic: 'x'.repeat(80), content: 'y'.repeat(10_050) });
  t.equal(long.status, 200);
  const read = await s.api('GET', `/messages/${long.body.id}`, alice, { apply_markdown: false });
  t.equal(read.body.message.subject, `${'x'.repeat(57)}...`);
  t.equal(read.body.message.content.length, 10_000);
  t.ok(read.body.message.content.endsWith('\n[message truncated]'));
  const tooMany = await s.api('GET', '/messages', alice, { anchor: 'newest', num_before: 3000, num_after: 3000 });
  t.equal(tooMany.status, 400);
});

t.test('anchors and windows', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'general-2', [bob]);
  const ids: number[] = [];
  for (let i = 0; i < 6; i++) ids.push(await sendStream(s, alice, 'general-2', 'count', `message ${i}`));

  const window = await s.api('GET', '/messages', bob, { anchor: String(ids[2]), num_before: 1, num_after: 2 });
  t.same(window.body.messages.map((m: { id: number }) => m.id), [ids[1], ids[2], ids[3], ids[4]]);
  t.equal(window.body.found_anchor, true);
  t.equal(window.body.found_oldest, false);
  t.equal(window.body.found_newest, false);
  t.equal(window.body.anchor, ids[2]);

  // The anchor may be left out only at an end of the window, as on the real server.
  const excluded = await s.api('GET', '/messages', bob, { anchor: ids[2], num_before: 0, num_after: 1, include_anchor: false });
  t.same(excluded.body.messages.map((m: { id: number }) => m.id), [ids[3]]);
  t.equal(excluded.body.found_anchor, false);
  const gap = await s.api('GET', '/messages', bob, { anchor: ids[2], num_before: 1, num_after: 1, include_anchor: false });
  t.equal(gap.body.msg, 'The anchor can only be excluded at an end of the range');

  const oldest = await s.api('GET', '/messages', bob, { anchor: 'oldest', num_before: 0, num_after: 2 });
  t.same(oldest.body.messages.map((m: { id: number }) => m.id), [ids[0], ids[1]]);
  t.equal(oldest.body.found_oldest, true);

  // Bob reads the first three: first_unread anchors on the fourth.
  await s.api('POST', '/messages/flags', bob, { messages: ids.slice(0, 3), op: 'add', flag: 'read' });
  const firstUnread = await s.api('GET', '/messages', bob, { anchor: 'first_unread', num_before: 0, num_after: 0 });
  t.equal(firstUnread.body.anchor, ids[3]);
  t.same(firstUnread.body.messages.map((m: { id: number }) => m.id), [ids[3]]);
  const legacy = await s.api('GET', '/messages', bob, { use_first_unread_anchor: true, num_before: 0, num_after: 0 });
  t.equal(legacy.body.anchor, ids[3]);
  const bad = await s.api('GET', '/messages', bob, { anchor: 'sideways', num_before: 0, num_after: 0 });
  t.equal(bad.status, 400);
  t.equal(bad.body.msg, 'Invalid anchor');
});

t.test('narrows', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, alice, 'general-3', [bob, carol]);
  await createChannel(s, alice, 'random-3', [bob]);
  const aw = await s.api('PUT', '/users/me/alert_words', bob, { alert_words: ['Pineapple'] });
  if (aw.status !== 200) await s.api('POST', '/users/me/alert_words', bob, { alert_words: ['Pineapple'] });

  const a1 = await sendStream(s, alice, 'general-3', 'lunch', 'We are running late, see https://example.com');
  const a2 = await sendStream(s, carol, 'general-3', 'Lunch', 'I like PINEAPPLE pizza');
  const a3 = await sendStream(s, alice, 'random-3', 'misc', 'hello @**Bob** and @**all**');
  const a4 = await sendStream(s, alice, 'general-3', '✔ solved', 'fixed it');
  const d1 = await sendDm(s, alice, [bob], 'direct one');
  const d2 = await sendDm(s, alice, [bob, carol], 'group one');
  await s.api('POST', '/messages/flags', bob, { messages: [a2], op: 'add', flag: 'starred' });
  await s.api('POST', `/messages/${a1}/reactions`, carol, { emoji_name: 'smile' });

  const ids = async (narrow: unknown[], as = bob) => {
    const r = await s.api('GET', '/messages', as, newest(narrow));
    if (r.status !== 200) return r.body;
    return r.body.messages.map((m: { id: number }) => m.id);
  };
  t.same(await ids([{ operator: 'channel', operand: 'general-3' }, { operator: 'topic', operand: 'lunch' }]), [a1, a2], 'topic is case-insensitive');
  t.same(await ids([['stream', 'general-3'], ['topic', 'lunch']]), [a1, a2], 'pairs and legacy names');
  t.same(await ids([{ operator: 'sender', operand: carol.id }]), [a2], 'sender by id');
  t.same(await ids([{ operator: 'sender', operand: carol.email }]), [a2], 'sender by email');
  t.same(await ids([{ operator: 'dm', operand: alice.email }]), [d1]);
  t.same(await ids([{ operator: 'pm-with', operand: [alice.id, carol.id] }]), [d2]);
  t.same(await ids([{ operator: 'dm-including', operand: carol.id }]), [d2]);
  t.same(await ids([{ operator: 'is', operand: 'dm' }]), [d1, d2]);
  t.same(await ids([{ operator: 'is', operand: 'private' }]), [d1, d2]);
  t.same(await ids([{ operator: 'is', operand: 'starred' }]), [a2]);
  t.same(await ids([{ operator: 'is', operand: 'mentioned' }]), [a3]);
  t.same(await ids([{ operator: 'is', operand: 'alerted' }]), [a2], 'alert words are case-insensitive');
  t.same(await ids([{ operator: 'is', operand: 'resolved' }]), [a4]);
  t.same(await ids([{ operator: 'has', operand: 'link' }]), [a1]);
  t.same(await ids([{ operator: 'has', operand: 'reaction' }]), [a1]);
  t.same(await ids([{ operator: 'search', operand: 'run' }]), [a1], 'full-text search stems words');
  t.same(await ids([{ operator: 'search', operand: 'pineapple' }]), [a2]);
  t.same(await ids([{ operator: 'id', operand: a3 }]), [a3]);
  t.same(await ids([{ operator: 'channel', operand: 'general-3' }, { operator: 'topic', operand: 'lunch', negated: true }]), [a4], 'negation');
  t.same(await ids([{ operator: 'channels', operand: 'public' }, { operator: 'sender', operand: alice.id }]), [a1, a3, a4]);
  t.same(await ids([{ operator: 'with', operand: a2 }]), [a1, a2], 'with: the conversation of that message');
  t.same(await ids([{ operator: 'near', operand: String(a2) }, { operator: 'channel', operand: 'random-3' }]), [a3], 'near is ignored');
  t.same(await ids([]), [a1, a2, a3, a4, d1, d2]);
  t.same(await ids([], carol), [a1, a2, a4, d2], "carol's history leaves out the channel she is not in and bob's DM");

  t.same(await ids([{ operator: 'is', operand: 'unread' }]), [a1, a2, a3, a4, d1, d2], 'starring does not mark read');
  t.same(await ids([{ operator: 'is', operand: 'unread' }], alice), [a2], "the sender's own messages are read");

  const matches = await s.api('GET', '/messages/matches_narrow', bob, { msg_ids: [a1, a2, a3], narrow: [{ operator: 'search', operand: 'pineapple' }] });
  t.equal(matches.status, 200);
  t.same(Object.keys(matches.body.messages), [String(a2)]);
  t.match(matches.body.messages[a2].match_content, /<span class="highlight">PINEAPPLE<\/span>/);
  t.equal(matches.body.messages[a2].match_subject, 'Lunch');
  const searched = await s.api('GET', '/messages', bob, newest([{ operator: 'search', operand: 'lunch' }]));
  t.equal(searched.body.messages[0].match_subject, '<span class="highlight">lunch</span>');

  for (const bad of [
    [{ operator: 'foo', operand: 'x' }],
    [{ operator: 'is', operand: 'nonsense' }],
    [{ operator: 'has', operand: 'nonsense' }],
    [{ operator: 'channel', operand: 'missing' }],
    [{ operator: 'sender', operand: 'ghost@example.com' }],
    [{ operator: 'channel', operand: 'general-3' }, { operator: 'is', operand: 'dm' }],
  ]) {
    const r = await s.api('GET', '/messages', bob, newest(bad as unknown[]));
    t.equal(r.status, 400, JSON.stringify(bad));
    t.equal(r.body.code, 'BAD_NARROW', JSON.stringify(bad));
  }
  // A term of the wrong shape is a bad parameter, as on the real server.
  for (const bad of [['just a string'], [{ operator: 'topic' }]]) {
    const r = await s.api('GET', '/messages', bob, newest(bad as unknown[]));
    t.equal(r.status, 400, JSON.stringify(bad));
    t.equal(r.body.code, 'BAD_REQUEST', JSON.stringify(bad));
  }
});

t.test('visibility: private channels, guests, DM outsiders', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');
  await createChannel(s, alice, 'private-protected-4', [bob], { invite_only: true, history_public_to_subscribers: false });
  await createChannel(s, alice, 'private-shared-4', [bob], { invite_only: true, history_public_to_subscribers: true });
  await createChannel(s, alice, 'public-4', [bob]);

  const p1 = await sendStream(s, alice, 'private-protected-4', 't', 'before eve');
  const s1 = await sendStream(s, alice, 'private-shared-4', 't', 'shared before eve');
  const pub = await sendStream(s, alice, 'public-4', 't', 'public words');
  const dm = await sendDm(s, alice, [bob], 'just us');

  for (const outsider of [eve, admin, guest]) {
    for (const id of [p1, s1, dm]) {
      const r = await s.api('GET', `/messages/${id}`, outsider);
      t.equal(r.body.msg, 'Invalid message(s)', `${id} is hidden from an outsider`);
    }
    const all = await s.api('GET', '/messages', outsider, newest([{ operator: 'channel', operand: 'private-protected-4' }]));
    t.same(all.body.messages ?? [], [], 'a private channel narrow shows an outsider nothing');
    const matches = await s.api('GET', '/messages/matches_narrow', outsider, { msg_ids: [p1, s1, dm], narrow: [] });
    t.same(matches.body.messages, {});
    const react = await s.api('POST', `/messages/${dm}/reactions`, outsider, { emoji_name: 'smile' });
    t.equal(react.body.msg, 'Invalid message(s)');
  }
  t.equal((await s.api('GET', `/messages/${pub}`, eve)).status, 200, 'members read public channels they are not in');
  const pubFlags = (await s.api('GET', `/messages/${pub}`, eve)).body.message.flags;
  t.same(pubFlags, ['read', 'historical']);
  t.equal((await s.api('GET', `/messages/${pub}`, guest)).body.msg, 'Invalid message(s)', 'guests do not');

  // Eve joins both private channels: the protected one shows only what she received.
  await subscribe(s, alice, 'private-protected-4', [eve]);
  await subscribe(s, alice, 'private-shared-4', [eve]);
  const p2 = await sendStream(s, alice, 'private-protected-4', 't', 'after eve');
  const protectedView = await s.api('GET', '/messages', eve, newest([{ operator: 'channel', operand: 'private-protected-4' }]));
  t.same(protectedView.body.messages.map((m: { id: number }) => m.id), [p2]);
  t.equal((await s.api('GET', `/messages/${p1}`, eve)).body.msg, 'Invalid message(s)');
  const sharedView = await s.api('GET', '/messages', eve, newest([{ operator: 'channel', operand: 'private-shared-4' }]));
  t.same(sharedView.body.messages.map((m: { id: number }) => m.id), [s1]);

  // A public channel joined late: earlier messages are history (read), later ones are received;
  // after leaving, new messages are not in the user's history any more.
  await subscribe(s, alice, 'public-4', [eve]);
  const pub2 = await sendStream(s, alice, 'public-4', 't', 'while eve is in');
  const seen = await s.api('GET', '/messages', eve, newest([{ operator: 'channel', operand: 'public-4' }]));
  t.same(seen.body.messages.map((m: { id: number; flags: string[] }) => [m.id, m.flags]), [[pub, ['read', 'historical']], [pub2, []]]);
  await unsubscribe(s, eve, 'public-4', [eve]);
  const pub3 = await sendStream(s, alice, 'public-4', 't', 'after eve left');
  const history = await s.api('GET', '/messages', eve, newest([{ operator: 'sender', operand: alice.id }]));
  t.same(history.body.messages.map((m: { id: number }) => m.id), [p2, pub2], "eve's history: only what she received");
  t.equal((await s.api('GET', `/messages/${pub3}`, eve)).body.message.flags.includes('historical'), true);
});

