import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel } from '../helpers/typing-fixture.js';
import { setRealmProperties } from '../helpers/realm.js';

t.test('read receipts: who read a message, with the real server exclusions', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const dave = await s.user(Role.MEMBER, 'Dave');
  const erin = await s.user(Role.MEMBER, 'Erin');
  const frank = await s.user(Role.MEMBER, 'Frank');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const channel = await createChannel(s, alice, 'receipts', { subscribers: [alice.id, bob.id, carol.id, dave.id, erin.id, frank.id] });
  const sent = await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: 'hello' });
  const id = sent.body.id as number;
  const receipts = async (as = alice) => s.api('GET', `/messages/${id}/read_receipts`, as);

  t.same((await receipts()).body, { result: 'success', msg: '', user_ids: [] }, 'nobody has read it yet; the sender is never listed');
  for (const u of [bob, carol, dave, erin, frank]) {
    t.equal((await s.api('POST', '/messages/flags', u, { messages: [id], op: 'add', flag: 'read' })).status, 200);
  }
  t.same((await receipts()).body.user_ids, [bob.id, carol.id, dave.id, erin.id, frank.id].sort((a, b) => a - b));

  await s.api('PATCH', '/settings', carol, { send_read_receipts: false });
  await s.api('POST', `/users/me/muted_users/${alice.id}`, dave);
  await s.api('POST', `/users/me/muted_users/${erin.id}`, alice);
  await s.api('POST', '/messages/flags', frank, { messages: [id], op: 'remove', flag: 'read' });
  t.same((await receipts()).body.user_ids, [bob.id],
    'not Carol (send_read_receipts off), not Dave (muted the viewer), not Erin (muted by the viewer), not Frank (marked unread again)');
  t.same((await receipts(erin)).body.user_ids, [bob.id, dave.id, erin.id].sort((a, b) => a - b), 'mutes count for the viewer only; the viewer is listed too');

  await s.api('POST', '/messages/flags', outsider, { messages: [id], op: 'add', flag: 'starred' });
  t.ok((await receipts()).body.user_ids.includes(outsider.id), 'a historical row of a public channel message counts, as on the real server');

  await s.api('DELETE', `/users/${bob.id}`, s.owner);
  t.notOk((await receipts()).body.user_ids.includes(bob.id), 'deactivated users are left out');

  const dm = await s.api('POST', '/messages', alice, { type: 'direct', to: [bob.id === 0 ? 0 : carol.id], content: 'private' });
  const hidden = await s.api('GET', `/messages/${dm.body.id}/read_receipts`, outsider);
  t.same(hidden.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }, 'an inaccessible message');
  t.equal((await s.api('GET', '/messages/99999999/read_receipts', alice)).body.msg, 'Invalid message(s)');
  t.equal((await s.api('GET', '/messages/abc/read_receipts', alice)).status, 404, 'an integer in the path takes digits only: no route');

  await setRealmProperties(s, { enable_read_receipts: false });
  t.same((await receipts()).body, { result: 'error', msg: 'Read receipts are disabled in this organization.', code: 'BAD_REQUEST' });
  t.equal((await s.api('GET', `/messages/${dm.body.id}/read_receipts`, outsider)).body.msg, 'Invalid message(s)', 'access is checked first');
});

t.test('read receipts follow the read watermark and DMs', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const dm = await s.api('POST', '/messages', alice, { type: 'direct', to: [bob.id, carol.id], content: 'group' });
  const id = dm.body.id as number;
  t.same((await s.api('GET', `/messages/${id}/read_receipts`, bob)).body.user_ids, []);
  t.equal((await s.api('POST', '/mark_all_as_read', bob)).status, 200);
  t.same((await s.api('GET', `/messages/${id}/read_receipts`, carol)).body.user_ids, [bob.id], 'read through the watermark');
  await s.api('POST', '/messages/flags', bob, { messages: [id], op: 'remove', flag: 'read' });
  t.same((await s.api('GET', `/messages/${id}/read_receipts`, carol)).body.user_ids, [], 'marked unread below the watermark');
});

t.test('read receipts: a historical row made by reacting counts; bots are listed', async (t) => {
  const s = await startTestServer(t);
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const channel = await createChannel(s, cordelia, 'test-stream', { subscribers: [cordelia.id] });
  const id = (await s.api('POST', '/messages', cordelia, { type: 'stream', to: channel, topic: 't', content: 'foo' })).body.id as number;
  t.equal((await s.api('POST', `/messages/${id}/reactions`, hamlet, { emoji_name: 'smile' })).status, 200);
  t.same((await s.api('GET', `/messages/${id}/read_receipts`, hamlet)).body.user_ids, [hamlet.id],
    'reacting to a message not received makes a historical, read row (test_historical_usermessages_read_flag_not_considered)');

  const created = await s.api('POST', '/bots', hamlet, { full_name: 'Reader Bot', short_name: `reader${hamlet.id}`, bot_type: 1 });
  t.equal(created.status, 200);
  const botAuth = { id: created.body.user_id as number, auth: `Basic ${Buffer.from(`${(await s.api('GET', `/users/${created.body.user_id}`, hamlet)).body.user.email}:${created.body.api_key}`).toString('base64')}` };
  const bot = { ...hamlet, ...botAuth };
  await s.api('POST', '/users/me/subscriptions', cordelia, { subscriptions: JSON.stringify([{ name: 'test-stream' }]), principals: JSON.stringify([bot.id]) });
  const m = (await s.api('POST', '/messages', cordelia, { type: 'stream', to: channel, topic: 't', content: 'for the bot' })).body.id as number;
  t.equal((await s.api('POST', '/messages/flags', bot, { messages: [m], op: 'add', flag: 'read' })).status, 200);
  t.same((await s.api('GET', `/messages/${m}/read_receipts`, cordelia)).body.user_ids, [bot.id], 'a bot that marks a message read is listed');
});
