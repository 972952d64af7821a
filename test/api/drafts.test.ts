import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { makeChannel } from './drafts-helpers.js';

t.test('drafts: create, list, edit, delete', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id] });

  const empty = await s.api('GET', '/drafts', alice);
  t.same(empty.body, { result: 'success', msg: '', count: 0, drafts: [] });

  const created = await s.api('POST', '/drafts', alice, {
    drafts: [
      { type: 'stream', to: [channel], topic: 'plans', content: 'first', timestamp: 100 },
      { type: 'private', to: [bob.id, bob.id], topic: 'ignored', content: 'second', timestamp: 300 },
      { type: '', to: [5], topic: 'x', content: 'third ', timestamp: 200 },
    ],
  });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.equal(created.body.ids.length, 3);
  t.ok(created.body.ids[0] < created.body.ids[1] && created.body.ids[1] < created.body.ids[2], 'ids in submission order');
  const [d1, d2, d3] = created.body.ids;

  const list = await s.api('GET', '/drafts', alice);
  t.equal(list.body.count, 3);
  t.same(list.body.drafts, [
    { id: d1, type: 'stream', to: [channel], topic: 'plans', content: 'first', timestamp: 100 },
    { id: d3, type: '', to: [], topic: '', content: 'third', timestamp: 200 },
    { id: d2, type: 'private', to: [bob.id], topic: '', content: 'second', timestamp: 300 },
  ], 'oldest edit first (as the real server lists them; /register has them newest first); unaddressed and direct drafts drop topic and fix `to`');
  t.same((await s.api('POST', '/register', alice, { fetch_event_types: ['drafts'] })).body.drafts.map((d: any) => d.id), [d2, d3, d1], '/register: newest first');

  const before = Math.floor(Date.now() / 1000);
  const noStamp = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'now' }] });
  const stamped = (await s.api('GET', '/drafts', alice)).body.drafts.find((d: any) => d.id === noStamp.body.ids[0]);
  t.ok(stamped.timestamp >= before && stamped.timestamp <= before + 5, 'server fills the timestamp');

  const edited = await s.api('PATCH', `/drafts/${d1}`, alice, { draft: { type: 'stream', to: [channel], topic: 'new topic', content: 'edited', timestamp: 500 } });
  t.equal(edited.status, 200);
  const afterEdit = await s.api('GET', '/drafts', alice);
  t.same(afterEdit.body.drafts.find((d: any) => d.id === d1), { id: d1, type: 'stream', to: [channel], topic: 'new topic', content: 'edited', timestamp: 500 });

  // Someone else's draft does not exist for bob.
  for (const [method, params] of [['PATCH', { draft: { type: '', to: [], topic: '', content: 'x' } }], ['DELETE', {}]] as const) {
    const foreign = await s.api(method, `/drafts/${d1}`, bob, params);
    t.equal(foreign.status, 404);
    t.same(foreign.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Draft does not exist' });
  }
  const missing = await s.api('PATCH', '/drafts/999999', alice, { draft: { type: '', to: [], topic: '', content: 'x' } });
  t.equal(missing.body.msg, 'Draft does not exist');
  // The draft parameter is parsed before the draft is looked up; its recipients are checked after.
  t.equal((await s.api('PATCH', '/drafts/999999', alice, { draft: { type: 'dm', to: [], topic: '', content: 'x' } })).body.msg, 'Invalid draft["type"]');
  t.equal((await s.api('PATCH', '/drafts/999999', alice, { draft: { type: 'stream', to: [], topic: '', content: 'x' } })).body.msg, 'Draft does not exist');

  const deleted = await s.api('DELETE', `/drafts/${d2}`, alice);
  t.equal(deleted.status, 200);
  const again = await s.api('DELETE', `/drafts/${d2}`, alice);
  t.equal(again.status, 404);
  const ids = (await s.api('GET', '/drafts', alice)).body.drafts.map((d: any) => d.id);
  t.notOk(ids.includes(d2));
  t.equal((await s.api('GET', '/drafts', bob)).body.count, 0, 'drafts are per user');

  const unauth = await s.api('GET', '/drafts', null);
  t.equal(unauth.status, 401);
});

t.test('drafts: validation', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id] });
  const secret = await makeChannel(s, 'secret', { invite_only: true });
  const post = (draft: Record<string, unknown>) => s.api('POST', '/drafts', alice, { drafts: [draft] });
  const base = { type: 'stream', to: [channel], topic: 't', content: 'c' };

  for (const to of [[], [channel, channel + 1]]) {
    const r = await post({ ...base, to });
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Must specify exactly 1 channel ID for channel messages' });
  }
  t.equal((await post({ ...base, to: [999999] })).body.msg, 'Invalid channel ID');
  t.equal((await post({ ...base, to: [secret] })).body.msg, 'Invalid channel ID', 'a private channel the user is not in');
  t.equal((await post({ ...base, topic: 'a\u0000b' })).body.msg, 'Topic must not contain null bytes');
  t.equal((await post({ ...base, content: 'a\u0000b' })).body.msg, 'Message must not contain null bytes', 'content follows the rules of a message');
  // Worded as the real server's parameter parser words them.
  t.match((await post({ ...base, id: 5 })).body, { code: 'BAD_REQUEST', msg: 'Argument "id" at drafts[0] is unexpected' });
  t.match((await post({ ...base, to: 'x' })).body, { msg: 'drafts[0]["to"] is not a list' });
  t.match((await post({ ...base, to: [channel, 'x'] })).body, { msg: 'drafts[0]["to"][1] is not an integer' });
  t.match((await post({ ...base, type: 'channel', id: 5 })).body, { msg: 'Invalid drafts[0]["type"]' }, 'a field error comes before an unknown key');
  t.match((await post({ ...base, type: 'channel' })).body, { msg: 'Invalid drafts[0]["type"]' });
  t.match((await post({ type: 'stream', to: [channel], topic: 't' })).body, { msg: 'drafts[0]["content"] key is missing' });
  t.equal((await post({ type: 'private', to: [999999], topic: '', content: 'x' })).body.msg, 'Invalid user ID 999999');
  t.equal((await post({ ...base, timestamp: -1 })).body.msg, 'Timestamp must not be negative.');
  t.equal((await post({ ...base, content: '  \n ' })).body.msg, 'drafts[0]["content"] cannot be blank');
  t.equal((await post({ ...base, to: [99_999_999_999_999] })).body.msg, 'Invalid channel ID', 'an id past any row');
  t.equal((await post({ type: 'private', to: [99_999_999_999_999], topic: '', content: 'x' })).body.msg, 'Invalid user ID 99999999999999');
  t.match((await s.api('POST', '/drafts', alice, { drafts: 'nope' })).body, { code: 'BAD_REQUEST', msg: 'Argument "drafts" is not valid JSON.' });
  t.equal((await s.api('POST', '/drafts', alice, { drafts: [1] })).status, 400);
  t.equal((await s.api('PATCH', '/drafts/1', alice, {})).body.code, 'REQUEST_VARIABLE_MISSING');

  // A failing draft in a batch creates none of them.
  await s.api('POST', '/drafts', alice, { drafts: [base, { ...base, to: [] }] });
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 0);

  const long = await post({ ...base, topic: 'x'.repeat(100) });
  t.equal(long.status, 200);
  t.equal((await s.api('GET', '/drafts', alice)).body.drafts[0].topic, 'x'.repeat(57) + '...', 'long topics are cut to 57 characters and "..."');
  t.equal((await s.api('POST', '/drafts', alice, {})).body.code, 'REQUEST_VARIABLE_MISSING', 'drafts is required');
  t.same((await s.api('POST', '/drafts', alice, { drafts: [] })).body.ids, [], 'no drafts: nothing created');
  // A direct message draft to nobody is addressed to nobody; long content is cut like a message's.
  const nobody = (await post({ type: 'private', to: [], topic: '', content: '\n\nhello' })).body.ids[0];
  t.match((await s.api('GET', '/drafts', alice)).body.drafts.find((d: any) => d.id === nobody), { type: '', to: [], content: 'hello' });
  // A direct message draft is kept as its conversation: the author is left out of `to`, a deactivated user refused.
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const group = (await post({ type: 'private', to: [alice.id, carol.id, bob.id], topic: 'a\u0000b', content: 'group' })).body.ids[0];
  t.same((await s.api('GET', '/drafts', alice)).body.drafts.find((d: any) => d.id === group).to, [bob.id, carol.id].sort((a, b) => a - b), 'the other participants; a direct draft topic is not checked');
  t.equal((await s.api('DELETE', `/users/${carol.id}`, s.owner)).status, 200);
  const toGone = await post({ type: 'private', to: [bob.id, carol.id], topic: '', content: 'x' });
  t.equal(toGone.status, 400);
  t.match(toGone.body.msg, /^'[^']+' is no longer using Zulip\.$/);
  const huge = (await post({ ...base, content: 'y'.repeat(10_050) })).body.ids[0];
  const cut = (await s.api('GET', '/drafts', alice)).body.drafts.find((d: any) => d.id === huge).content as string;
  t.ok(cut.length === 10_000 && cut.endsWith('\n[message truncated]'), 'cut to 10,000 characters, not refused');
  const stripped = (await post({ type: '', to: [], topic: '', content: '   indented' })).body.ids[0];
  t.equal((await s.api('GET', '/drafts', alice)).body.drafts.find((d: any) => d.id === stripped).content, 'indented', 'the content parameter is stripped');
});

t.test('drafts: synchronization turned off', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const created = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'keep' }] });
  t.equal(created.status, 200);
  const { deleteAllDrafts } = await import('../../src/services/drafts.js');
  const { randomUUID } = await import('node:crypto');
  const meta = { actorId: alice.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() };
  const reg = await s.api('POST', '/register', alice, { event_types: ['drafts'], fetch_event_types: ['drafts'] });
  await s.platform.commands.run(
    { actor_id: alice.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() },
    async () => ({
      appends: [{ streamId: `user-${alice.id}`, expectedVersion: undefined, events: [{ type: 'UserSettingsChanged', data: { user_id: alice.id, changes: { enable_drafts_synchronization: false } } }] }],
      result: undefined,
    }),
  );
  await deleteAllDrafts(s.platform, meta, alice.id);
  t.same((await s.platform.db.selectFrom('drafts').selectAll().where('user_id', '=', alice.id).execute()), [], 'server copies are deleted');
  const polled = await s.api('GET', '/events', alice, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
  // The issue asks for remove events: every client's state then matches a fresh /register (no drafts).
  t.same(polled.body.events.filter((e: any) => e.type === 'drafts').map((e: any) => [e.op, e.draft_id]), [['remove', created.body.ids[0]]], 'a drafts remove event for each deleted draft');
  for (const [method, path, params] of [
    ['GET', '/drafts', {}],
    ['POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x' }] }],
    ['DELETE', `/drafts/${created.body.ids[0]}`, {}],
  ] as const) {
    const r = await s.api(method, path, alice, params);
    t.equal(r.status, 400, `${method} ${path}`);
    t.equal(r.body.msg, 'User has disabled synchronizing drafts.');
  }
  const state = await s.api('POST', '/register', alice, { fetch_event_types: ['drafts'] });
  t.same(state.body.drafts, []);
});
