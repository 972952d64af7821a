import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { PNG, sendFiles } from '../helpers/upload.js';

const createBot = async (s: Awaited<ReturnType<typeof startTestServer>>, owner: Parameters<Awaited<ReturnType<typeof startTestServer>>['api']>[2], name: string) => {
  const r = await s.api('POST', '/bots', owner, { full_name: name, short_name: name.toLowerCase().replace(/\W/g, '') });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body as { user_id: number; api_key: string };
};

t.test('bots: list, rename, owner, role, api key, deactivate — who may', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');
  const bot = await createBot(s, alice, 'Helper Bot');

  const list = await s.api('GET', '/bots', alice);
  t.match(list.body.bots, [{ full_name: 'Helper Bot', api_key: bot.api_key, default_sending_stream: null, default_all_public_streams: false }]);
  t.equal(list.body.bots.length, 1);
  t.same((await s.api('GET', '/bots', admin)).body.bots, [], 'GET /bots lists only the caller\'s own bots');

  // Neither another member nor a missing id nor a human.
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, bob, { full_name: 'Stolen' })).body.msg, 'Insufficient permission');
  t.equal((await s.api('PATCH', '/bots/999999', alice, { full_name: 'X' })).body.msg, 'No such bot');
  t.equal((await s.api('PATCH', `/bots/${bob.id}`, admin, { full_name: 'X' })).body.msg, 'No such bot');
  t.equal((await s.api('POST', `/bots/${bot.user_id}/api_key/regenerate`, bob)).body.msg, 'Insufficient permission');
  t.equal((await s.api('DELETE', `/bots/${bot.user_id}`, guest)).body.msg, 'Insufficient permission');

  const renamed = await s.api('PATCH', `/bots/${bot.user_id}`, alice, { full_name: 'Renamed Bot' });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.full_name, 'Renamed Bot');
  t.equal(renamed.body.bot_owner, alice.email);
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { full_name: 'Bob' })).body.msg, 'Name is already in use!');

  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { role: Role.ADMINISTRATOR })).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, admin, { role: Role.OWNER })).body.msg, 'Must be an organization owner');
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, admin, { role: Role.MODERATOR })).status, 200);
  t.equal((await s.api('GET', `/users/${bot.user_id}`, bob)).body.user.role, Role.MODERATOR);

  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { bot_owner_id: 999999 })).body.msg, 'Failed to change owner, no such user');
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { bot_owner_id: bot.user_id })).body.msg, "Failed to change owner, bots can't own other bots");
  const moved = await s.api('PATCH', `/bots/${bot.user_id}`, alice, { bot_owner_id: bob.id });
  t.equal(moved.body.bot_owner, bob.email);
  t.equal((await s.api('GET', `/users/${bot.user_id}`, alice)).body.user.bot_owner_id, bob.id);
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { full_name: 'Back' })).body.msg, 'Insufficient permission', 'the old owner lost it');

  const key = await s.api('POST', `/bots/${bot.user_id}/api_key/regenerate`, bob);
  t.equal(key.status, 200);
  t.not(key.body.api_key, bot.api_key);
  t.equal((await s.api('GET', '/bots', bob)).body.bots[0].api_key, key.body.api_key);

  t.equal((await s.api('DELETE', `/bots/${bot.user_id}`, bob)).status, 200);
  t.equal((await s.api('GET', `/users/${bot.user_id}`, bob)).body.user.is_active, false);
  t.same((await s.api('GET', '/bots', bob)).body.bots, [], 'deactivated bots are not listed');
});

t.test('bots: realm_bot and realm_user events keep state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const register = { event_types: ['realm_user', 'realm_bot'], fetch_event_types: ['realm_user', 'realm_bot'] };

  let botId = 0;
  const added = await verifyAction(t, s, admin, async () => { botId = (await createBot(s, alice, 'Event Bot')).user_id; }, { register });
  t.match(added, [{ type: 'realm_user', op: 'add' }, { type: 'realm_bot', op: 'add', bot: { owner_id: alice.id } }]);
  const base = (await s.api('POST', '/register', admin, register)).body;
  t.match(base.realm_bots, [{ user_id: botId, full_name: 'Event Bot', is_active: true }]);
  t.same((await s.api('POST', '/register', bob, register)).body.realm_bots, [], 'members see only their own bots');

  for (const viewer of [alice, admin, bob]) {
    await verifyAction(t, s, viewer, () => s.api('PATCH', `/bots/${botId}`, admin, { full_name: `Bot for ${viewer.id}` }), { register });
  }
  const rotated = await verifyAction(t, s, alice, () => s.api('POST', `/bots/${botId}/api_key/regenerate`, alice), { register });
  t.match(rotated, [{ type: 'realm_bot', op: 'update', bot: { user_id: botId } }]);
  t.type(rotated[0]!.bot.api_key, 'string');

  // Ownership moves from alice to bob: alice loses the bot, bob gains it, admins see the new owner.
  for (const viewer of [bob, admin]) {
    await verifyAction(t, s, viewer, () => s.api('PATCH', `/bots/${botId}`, admin, { bot_owner_id: bob.id }), { register });
    await verifyAction(t, s, viewer, () => s.api('PATCH', `/bots/${botId}`, admin, { bot_owner_id: alice.id }), { register });
  }
  // As send_bot_owner_update_events (test_events.py test_change_bot_owner): the realm_bot event, then realm_user.
  const lost = await verifyAction(t, s, alice, () => s.api('PATCH', `/bots/${botId}`, admin, { bot_owner_id: bob.id }), { register });
  t.match(lost, [{ type: 'realm_bot', op: 'delete', bot: { user_id: botId } }, { type: 'realm_user', person: { bot_owner_id: bob.id } }]);
  const gained = await verifyAction(t, s, alice, () => s.api('PATCH', `/bots/${botId}`, admin, { bot_owner_id: alice.id }), { register });
  t.match(gained, [{ type: 'realm_bot', op: 'add', bot: { user_id: botId, owner_id: alice.id } }, { type: 'realm_user' }]);

  for (const viewer of [alice, admin]) {
    await verifyAction(t, s, viewer, () => s.api('DELETE', `/bots/${botId}`, alice), { register });
    await verifyAction(t, s, viewer, () => s.api('POST', `/users/${botId}/reactivate`, admin), { register });
  }
  const gone = await verifyAction(t, s, alice, () => s.api('DELETE', `/bots/${botId}`, alice), { register });
  t.match(gone, [{ type: 'realm_user', person: { is_active: false } }, { type: 'realm_bot', op: 'update', bot: { user_id: botId, is_active: false } }]);
});

t.test('bots: default channels and avatar', async (t) => {
  const { makeChannel } = await import('./drafts-helpers.js');
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const bot = await createBot(s, alice, 'Default Bot');
  await makeChannel(s, 'general talk');
  await makeChannel(s, 'secret', { invite_only: true, subscribers: [s.owner.id] });
  const register = { event_types: ['realm_bot'], fetch_event_types: ['realm_bot'] };

  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { default_sending_stream: 'secret' })).body.msg, "Invalid channel name 'secret'", 'a private channel the owner cannot access');
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, { default_sending_stream: 'nowhere' })).body.msg, "Invalid channel name 'nowhere'");

  const set = await verifyAction(t, s, admin, () => s.api('PATCH', `/bots/${bot.user_id}`, alice, {
    default_sending_stream: 'general talk', default_events_register_stream: 'general talk', default_all_public_streams: true,
  }), { register });
  t.match(set, [
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.user_id, default_sending_stream: 'general talk' } },
    { type: 'realm_bot', op: 'update', bot: { default_events_register_stream: 'general talk' } },
    { type: 'realm_bot', op: 'update', bot: { default_all_public_streams: true } },
  ]);
  t.match((await s.api('GET', '/bots', alice)).body.bots, [{ default_sending_stream: 'general talk', default_events_register_stream: 'general talk', default_all_public_streams: true }]);
  const cleared = await verifyAction(t, s, alice, () => s.api('PATCH', `/bots/${bot.user_id}`, alice, { default_sending_stream: '' }), { register });
  t.match(cleared, [{ type: 'realm_bot', bot: { default_sending_stream: null } }]);
  t.equal((await s.api('PATCH', `/bots/${bot.user_id}`, alice, {})).body.default_sending_stream, null);

  const png = PNG;
  let response: { status: number; body: any } | undefined;
  const avatar = await verifyAction(t, s, alice, async () => { response = await sendFiles(s, alice, 'PATCH', `/bots/${bot.user_id}`, [{ field: 'f', data: png }]); }, {
    register: { event_types: ['realm_bot', 'realm_user'], fetch_event_types: ['realm_bot', 'realm_user'] },
  });
  t.match(response!.body.avatar_url, new RegExp(`^/user_avatars/1/${bot.user_id}\\.png\\?version=2$`));
  t.match(avatar, [{ type: 'realm_user', person: { avatar_source: 'U' } }, { type: 'realm_bot', op: 'update', bot: { avatar_url: response!.body.avatar_url } }]);
  const two = await sendFiles(s, alice, 'PATCH', `/bots/${bot.user_id}`, [{ field: 'a', data: png }, { field: 'b', data: png }]);
  t.equal(two.body.msg, 'You may only upload one file at a time');
});
