import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

t.test('push device tokens', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const apns = 'a1b2c3d4'.repeat(8);
  const fcm = 'dGhpcyBpcyBh:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_-cL3E';

  t.equal((await s.api('POST', '/users/me/push_device_token', alice, { token: apns, appid: 'org.zulip.Zulip' })).status, 200);
  t.equal((await s.api('POST', '/users/me/push_device_token', alice, { token: fcm, appid: 'com.zulipmobile' })).status, 200);
  t.equal((await s.api('POST', '/users/me/push_device_token', alice, { token: apns, appid: 'org.zulip.Zulip2' })).status, 200, 'registering again updates');
  let rows = await s.platform.db.selectFrom('push_devices').selectAll().where('user_id', '=', alice.id).orderBy('token').execute();
  t.same(rows.map((r) => [r.token, r.appid]), [[apns, 'org.zulip.Zulip2'], [fcm, 'com.zulipmobile']]);
  const stored = await s.platform.db.selectFrom('events').select(['type', 'stream_id']).where('stream_id', '=', `push-${alice.id}`).execute();
  t.same(stored.map((e) => e.type), ['PushDeviceRegistered', 'PushDeviceRegistered', 'PushDeviceRegistered'], 'kept as events on the user stream');

  const expect = async (params: Record<string, unknown>, msg: string, method = 'POST') => {
    const r = await s.api(method, '/users/me/push_device_token', alice, params);
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(params).slice(0, 60));
  };
  await expect({ token: '', appid: 'x' }, 'Empty or invalid length token');
  await expect({ token: 'a'.repeat(4097), appid: 'x' }, 'Empty or invalid length token');
  await expect({ token: 'not a token!', appid: 'x' }, 'Invalid push token');
  await expect({ token: '<script>', appid: 'x' }, 'Invalid push token');
  await expect({ token: apns, appid: 'bad app id' }, 'Invalid app ID');
  t.equal((await s.api('POST', '/users/me/push_device_token', alice, { token: apns })).body.code, 'REQUEST_VARIABLE_MISSING', 'appid is required');

  await expect({ token: 'deadbeef' }, 'Token does not exist', 'DELETE');
  const foreign = await s.api('DELETE', '/users/me/push_device_token', bob, { token: apns });
  t.equal(foreign.body.msg, 'Token does not exist', 'tokens are per user');
  t.equal((await s.api('DELETE', '/users/me/push_device_token', alice, { token: apns })).status, 200);
  await expect({ token: '' }, 'Empty or invalid length token', 'DELETE');
  rows = await s.platform.db.selectFrom('push_devices').selectAll().where('user_id', '=', alice.id).execute();
  t.same(rows.map((r) => r.token), [fcm]);
  t.equal((await s.api('POST', '/users/me/push_device_token', null, { token: apns, appid: 'x' })).status, 401);
});

t.test('legacy per-service routes: apns_device_token and android_gcm_reg_id', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: alice.id });
  const apns = 'c0ffee42'.repeat(8);
  const fcm = 'dGhpcyBpcyBh:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_-cL3E';
  const rows = async () =>
    (await s.platform.db.selectFrom('push_devices').select(['token', 'appid', 'kind']).where('user_id', '=', alice.id).orderBy('token').execute())
      .map((r) => [r.token, r.appid, r.kind]);
  const error = async (method: string, path: string, who: typeof alice, params: Record<string, unknown>, msg: string) => {
    const r = await s.api(method, path, who, params);
    t.equal(r.status, 400, `${method} ${path} ${JSON.stringify(params).slice(0, 50)}`);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
  };

  t.equal((await s.api('POST', '/users/me/apns_device_token', alice, { token: apns, appid: 'org.zulip.Zulip' })).status, 200);
  t.equal((await s.api('POST', '/users/me/android_gcm_reg_id', alice, { token: fcm })).status, 200);
  t.same(await rows(), [[apns, 'org.zulip.Zulip', 'apns'], [fcm, '', 'fcm']], 'stored with the other push tokens, with their kind');

  t.equal((await s.api('POST', '/users/me/apns_device_token', alice, { token: apns })).body.code, 'REQUEST_VARIABLE_MISSING', 'appid is required');
  await error('POST', '/users/me/apns_device_token', alice, { token: apns, appid: 'org_zulip' }, 'appid has invalid format');
  await error('POST', '/users/me/apns_device_token', alice, { token: '', appid: 'org.zulip.Zulip' }, 'Empty or invalid length token');
  await error('POST', '/users/me/android_gcm_reg_id', alice, { token: 'x'.repeat(4097) }, 'Empty or invalid length token');
  await error('POST', '/users/me/apns_device_token', alice, { token: 'abcde', appid: 'org.zulip.Zulip' }, 'Invalid APNS token');
  await error('POST', '/users/me/apns_device_token', alice, { token: 'abcdef', appid: 'org.zulip.Zulip' }, 'Invalid APNS token');
  t.equal((await s.api('POST', '/users/me/apns_device_token', alice, { token: 'abcdef==', appid: 'org.zulip.Zulip' })).status, 200, 'padded base64 is accepted');
  t.equal((await s.api('POST', '/users/me/android_gcm_reg_id', alice, { token: 'any token at all' })).status, 200, 'FCM tokens only have a length check');
  await error('POST', '/users/me/apns_device_token', bot, { token: apns, appid: 'org.zulip.Zulip' }, 'This endpoint does not accept bot requests.');
  await error('POST', '/users/me/android_gcm_reg_id', bot, { token: fcm }, 'This endpoint does not accept bot requests.');
  // Bots are refused before any parameter is read, as by the real server's human_users_only.
  await error('POST', '/users/me/apns_device_token', bot, {}, 'This endpoint does not accept bot requests.');
  await error('DELETE', '/users/me/android_gcm_reg_id', bot, {}, 'This endpoint does not accept bot requests.');
  // Registering a token again keeps the first registration, app id included.
  t.equal((await s.api('POST', '/users/me/apns_device_token', alice, { token: apns, appid: 'org.zulip.Other' })).status, 200);
  t.same((await rows()).find((r) => r[0] === apns), [apns, 'org.zulip.Zulip', 'apns']);

  await error('DELETE', '/users/me/apns_device_token', alice, { token: fcm }, 'Invalid APNS token');
  await error('DELETE', '/users/me/android_gcm_reg_id', alice, { token: apns }, 'Token does not exist');
  await error('DELETE', '/users/me/apns_device_token', bob, { token: apns }, 'Token does not exist');
  await error('DELETE', '/users/me/android_gcm_reg_id', alice, { token: '' }, 'Empty or invalid length token');
  t.equal((await s.api('DELETE', '/users/me/apns_device_token', alice, { token: apns })).status, 200);
  t.equal((await s.api('DELETE', '/users/me/android_gcm_reg_id', alice, { token: fcm })).status, 200);
  t.same(await rows(), [['abcdef==', 'org.zulip.Zulip', 'apns'], ['any token at all', '', 'fcm']]);
  t.equal((await s.api('POST', '/users/me/android_gcm_reg_id', null, { token: fcm })).status, 401);
});
