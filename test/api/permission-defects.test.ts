import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { PNG, sendFiles } from '../helpers/upload.js';

async function download(s: TestServer, as: TestUser, url: string) {
  return (await s.fastify.inject({ method: 'GET', url, headers: { authorization: as.auth } })).statusCode;
}

async function channel(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id as number;
}

async function linkedMessages(s: TestServer): Promise<number[]> {
  const rows = await s.platform.db.selectFrom('attachment_messages').select('message_id').execute();
  return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
}

t.test('a message claims only the uploads its sender may access (issue 24 item 11)', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'claims-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  await channel(s, alice, 'secret', { invite_only: true });
  const secret = (await sendFiles(s, alice, 'POST', '/user_uploads', [{ field: 'file', data: PNG }])).body.url as string;
  const first = await s.api('POST', '/messages', alice, { type: 'stream', to: 'secret', topic: 't', content: `[plan](${secret})` });
  t.equal(first.status, 200);
  t.equal(await download(s, eve, secret), 404, 'Eve cannot download it');

  const sent = await s.api('POST', '/messages', eve, { type: 'private', to: JSON.stringify([eve.id]), content: `[x](${secret})` });
  t.equal(sent.status, 200, 'the message itself is accepted');
  t.equal(await download(s, eve, secret), 404, 'linking it in a message of her own does not give it to her');
  await channel(s, eve, 'eves');
  const own = await s.api('POST', '/messages', eve, { type: 'stream', to: 'eves', topic: 't', content: 'nothing yet' });
  t.equal((await s.api('PATCH', `/messages/${own.body.id}`, eve, { content: `now [x](${secret})` })).status, 200);
  t.equal(await download(s, eve, secret), 404, 'nor does editing it into one');
  t.same(await linkedMessages(s), [first.body.id], 'only Alice\'s message claims the file');

  // Someone who may access an upload can still share it, as on the real server.
  await channel(s, alice, 'open');
  await channel(s, bob, 'open');
  const shared = (await sendFiles(s, alice, 'POST', '/user_uploads', [{ field: 'file', data: PNG }])).body.url as string;
  await s.api('POST', '/messages', alice, { type: 'stream', to: 'open', topic: 't', content: `[pic](${shared})` });
  t.equal(await download(s, bob, shared), 200, 'Bob reads the channel it was posted in');
  await s.api('POST', '/messages', bob, { type: 'private', to: JSON.stringify([eve.id]), content: `look [pic](${shared})` });
  t.equal(await download(s, eve, shared), 200, 'Bob may pass it on to Eve');
  t.equal(await download(s, eve, secret), 404);
});

t.test('deactivating a user deactivates the bots they own (issue 24 item 12)', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Alices bot', { bot_type: 1, bot_owner_id: alice.id });
  const otherBot = await s.user(Role.MEMBER, 'Admins bot', { bot_type: 1, bot_owner_id: admin.id });
  t.equal((await s.api('GET', '/users/me', bot)).status, 200, 'the bot works');
  t.equal((await s.api('DELETE', `/users/${alice.id}`, admin)).status, 200);
  t.not((await s.api('GET', '/users/me', bot)).status, 200, 'her bot stops working with her');
  t.equal((await s.api('GET', `/users/${bot.id}`, admin)).body.user.is_active, false);
  t.equal((await s.api('GET', '/users/me', otherBot)).status, 200, 'other bots are untouched');

  t.equal((await s.api('POST', `/users/${alice.id}/reactivate`, admin)).status, 200);
  t.equal((await s.api('GET', '/users/me', alice)).status, 200);
  t.equal((await s.api('GET', `/users/${bot.id}`, admin)).body.user.is_active, false, 'reactivation does not bring the bot back');
  t.equal((await s.api('POST', `/users/${bot.id}/reactivate`, admin)).status, 200);
  t.equal((await s.api('GET', '/users/me', bot)).status, 200, 'it is reactivated on its own');

  // Deactivating oneself takes one's bots too.
  t.equal((await s.api('DELETE', '/users/me', alice)).status, 200);
  t.not((await s.api('GET', '/users/me', bot)).status, 200);
});

t.test('a hidden email address cannot be confirmed (issue 24 item 13)', async (t) => {
  const s = await startTestServer(t);
  const bob = await s.user(Role.MEMBER, 'Bob');
  const eve = await s.user(Role.MEMBER, 'Eve');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  t.equal((await s.api('PATCH', '/settings', bob, { email_address_visibility: 4 })).status, 200);
  const unknown = 'nobody-here@example.com';
  const dummy = (await s.api('GET', `/users/${bob.id}`, eve)).body.user.email as string;
  t.not(dummy, bob.email, 'Eve sees only the dummy address');

  for (const viewer of [eve, admin]) {
    const byReal = await s.api('GET', `/users/${encodeURIComponent(bob.email)}`, viewer);
    const byUnknown = await s.api('GET', `/users/${encodeURIComponent(unknown)}`, viewer);
    t.equal(byReal.status, byUnknown.status, 'GET /users/{email}: same answer as an unknown address');
    t.same(byReal.body, byUnknown.body);
  }
  t.equal((await s.api('GET', `/users/${encodeURIComponent(dummy)}`, eve)).body.user.user_id, bob.id, 'the dummy address works');
  t.equal((await s.api('GET', `/users/${encodeURIComponent(bob.email)}`, bob)).body.user.user_id, bob.id, 'Bob may use his own');

  const narrow = async (email: string) => s.api('GET', '/messages', eve, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'sender', operand: email }] });
  const narrowReal = await narrow(bob.email);
  const narrowUnknown = await narrow(unknown);
  t.equal(narrowReal.status, narrowUnknown.status, 'sender narrow: same answer as an unknown address');
  t.same(narrowReal.body.msg?.replace(bob.email, 'X'), narrowUnknown.body.msg?.replace(unknown, 'X'));
  const dmNarrow = await s.api('GET', '/messages', eve, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'dm', operand: [bob.email] }] });
  t.equal(dmNarrow.status, narrowUnknown.status, 'dm narrow too');

  const dmReal = await s.api('POST', '/messages', eve, { type: 'private', to: JSON.stringify([bob.email]), content: 'hi' });
  const dmUnknown = await s.api('POST', '/messages', eve, { type: 'private', to: JSON.stringify([unknown]), content: 'hi' });
  t.equal(dmReal.status, 400, 'no DM to the hidden address');
  t.equal(dmReal.body.msg.replace(bob.email, 'X'), dmUnknown.body.msg.replace(unknown, 'X'));
  t.equal((await s.api('POST', '/messages', eve, { type: 'private', to: JSON.stringify([dummy]), content: 'hi' })).status, 200, 'the dummy address works');

  await channel(s, eve, 'eves');
  const principal = await s.api('POST', '/users/me/subscriptions', eve, { subscriptions: [{ name: 'eves' }], principals: [bob.email] });
  const principalUnknown = await s.api('POST', '/users/me/subscriptions', eve, { subscriptions: [{ name: 'eves' }], principals: [unknown] });
  t.equal(principal.status, 400, 'principals: no user behind the hidden address');
  t.same(principal.body, principalUnknown.body);

  // Making Bob a bot's owner does not show the administrator his address either.
  const bot = await s.user(Role.MEMBER, 'Admins bot', { bot_type: 1, bot_owner_id: admin.id });
  const handed = await s.api('PATCH', `/bots/${bot.id}`, admin, { bot_owner_id: bob.id });
  t.equal(handed.status, 200);
  t.equal(handed.body.bot_owner, dummy, 'PATCH /bots names the new owner by his dummy address');

  // A deactivated user addressed by id is named by the address the sender may see.
  t.equal((await s.api('DELETE', `/users/${bob.id}`, admin)).status, 200);
  const gone = await s.api('POST', '/messages', eve, { type: 'private', to: JSON.stringify([bob.id]), content: 'hi' });
  t.equal(gone.status, 400);
  t.notMatch(gone.body.msg, bob.email, 'the error does not reveal the address');
});

t.test('an administrator not subscribed to a private channel gets Invalid channel ID', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const id = await channel(s, alice, 'hidden', { invite_only: true });
  await s.api('POST', '/messages', alice, { type: 'stream', to: id, topic: 'plans', content: 'x' });
  const read = await s.api('POST', '/mark_stream_as_read', admin, { stream_id: id });
  t.equal(read.status, 400);
  t.equal(read.body.msg, 'Invalid channel ID');
  const del = await s.api('POST', `/streams/${id}/delete_topic`, admin, { topic_name: 'plans' });
  t.equal(del.status, 400);
  t.equal(del.body.msg, 'Invalid channel ID');
  t.equal((await s.api('GET', '/messages', alice, { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: id }] })).body.messages.length, 1, 'nothing was deleted');
  // Subscribed, the administrator may.
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'hidden' }], principals: [admin.id] });
  t.equal((await s.api('POST', '/mark_stream_as_read', admin, { stream_id: id })).status, 200);
  t.equal((await s.api('POST', `/streams/${id}/delete_topic`, admin, { topic_name: 'plans' })).status, 200);
});

t.test('channel names are compared after NFC normalization', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const composed = 'caf\u00e9';
  const decomposed = 'cafe\u0301';
  const id = await channel(s, alice, composed);
  const again = await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: decomposed }] });
  t.same(again.body.already_subscribed, { [alice.email]: [composed] }, 'the other spelling is the same channel');
  await s.api('POST', '/users/me/subscriptions', bob, { subscriptions: [{ name: decomposed }] });
  const streams = (await s.api('GET', '/streams', alice)).body.streams as Array<{ name: string }>;
  t.same(streams.map((c) => c.name), [composed], 'one channel');
  const sent = await s.api('POST', '/messages', bob, { type: 'stream', to: decomposed, topic: 't', content: 'hi' });
  t.equal(sent.status, 200);
  t.equal((await s.api('GET', '/get_stream_id', bob, { stream: decomposed })).body.stream_id, id);
  const other = await channel(s, alice, 'other');
  const rename = await s.api('PATCH', `/streams/${other}`, alice, { new_name: decomposed });
  t.equal(rename.status, 400, 'renaming to the other spelling is a name clash');
  const created = await channel(s, alice, 'new\u0301');
  const row = await s.platform.db.selectFrom('streams').select('name').where('id', '=', created).executeTakeFirstOrThrow();
  t.equal(row.name, 'new\u0301'.normalize('NFC'), 'names are stored composed');
});
