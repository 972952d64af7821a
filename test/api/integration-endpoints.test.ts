import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel } from '../helpers/typing-fixture.js';

t.test('dev_fetch_api_key exists only in development mode', async (t) => {
  const prod = await startTestServer(t);
  const alice = await prod.user(Role.MEMBER, 'Alice');
  const off = await prod.api('POST', '/dev_fetch_api_key', null, { username: alice.email });
  t.equal(off.status, 404, 'not routed by default');
  t.notOk(JSON.stringify(off.body).includes(alice.apiKey));

  const dev = await startTestServer(t, { development: true });
  const bob = await dev.user(Role.MEMBER, 'Bob');
  const gone = await dev.user(Role.MEMBER, 'Gone');
  await dev.api('DELETE', `/users/${gone.id}`, dev.owner);
  const ok = await dev.api('POST', '/dev_fetch_api_key', null, { username: bob.email });
  t.same(ok.body, { result: 'success', msg: '', api_key: bob.apiKey, email: bob.email, user_id: bob.id });
  const unknown = await dev.api('POST', '/dev_fetch_api_key', null, { username: 'nobody@example.com' });
  t.equal(unknown.status, 401);
  t.equal(unknown.body.code, 'AUTHENTICATION_FAILED');
  const deactivated = await dev.api('POST', '/dev_fetch_api_key', null, { username: gone.email });
  t.equal(deactivated.body.code, 'USER_DEACTIVATED');
  const missing = await dev.api('POST', '/dev_fetch_api_key', null, {});
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('BigBlueButton and test push notifications without the integrations', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: alice.id });

  const bbb = await s.api('GET', '/calls/bigbluebutton/create', alice, { meeting_name: 'standup meeting' });
  t.same(bbb.body, { result: 'error', msg: 'BigBlueButton is not configured.', code: 'BAD_REQUEST' });
  t.equal(bbb.status, 400);
  t.equal((await s.api('GET', '/calls/bigbluebutton/create', alice, {})).body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal((await s.api('GET', '/calls/bigbluebutton/create', null, { meeting_name: 'x' })).status, 401);

  t.same((await s.api('POST', '/mobile_push/test_notification', alice, {})).body, { result: 'success', msg: '' }, 'all devices (none): nothing to send');
  const unknown = await s.api('POST', '/mobile_push/test_notification', alice, { token: 'not-registered' });
  t.same(unknown.body, { result: 'error', msg: 'Device not recognized', code: 'INVALID_PUSH_DEVICE_TOKEN' });
  t.equal((await s.api('POST', '/users/me/push_device_token', alice, { token: 'device-1', appid: 'org.zulip.Zulip' })).status, 200);
  t.equal((await s.api('POST', '/mobile_push/test_notification', alice, { token: 'device-1' })).status, 200, 'a registered device');
  const other = await s.api('POST', '/mobile_push/test_notification', s.owner, { token: 'device-1' });
  t.equal(other.body.code, 'INVALID_PUSH_DEVICE_TOKEN', "another user's device is not recognized");
  const byBot = await s.api('POST', '/mobile_push/test_notification', bot, {});
  t.same(byBot.body, { result: 'error', msg: 'This endpoint does not accept bot requests.', code: 'BAD_REQUEST' });
});

t.test('a channel email address: stable per user and channel, only for accessible channels', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const guest = await s.user(Role.GUEST, 'Guest');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const open = await createChannel(s, alice, 'Team Chat: Q&A_2', { subscribers: [alice.id] });
  const secret = await createChannel(s, alice, 'secret', { subscribers: [alice.id], invite_only: true });

  const first = await s.api('GET', `/streams/${open}/email_address`, alice);
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.match(first.body.email, /^team-chat-q-a_2\.[0-9a-f]{32}\.show-sender@[^@\s]+$/, 'the real server shape');
  t.equal((await s.api('GET', `/streams/${open}/email_address`, alice)).body.email, first.body.email, 'stable');
  const bobs = await s.api('GET', `/streams/${open}/email_address`, bob);
  t.equal(bobs.status, 200, 'a public channel is accessible unsubscribed');
  t.not(bobs.body.email, first.body.email, 'per user');
  t.not((await s.api('GET', `/streams/${secret}/email_address`, alice)).body.email, first.body.email, 'per channel');

  for (const [who, name] of [[bob, 'a member'], [admin, 'an unsubscribed administrator'], [guest, 'a guest']] as const) {
    const denied = await s.api('GET', `/streams/${secret}/email_address`, who);
    t.same(denied.body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }, `private channel, ${name}`);
  }
  t.equal((await s.api('GET', `/streams/${open}/email_address`, guest)).body.msg, 'Invalid channel ID', 'a guest needs a subscription');
  t.equal((await s.api('GET', '/streams/999999/email_address', alice)).body.msg, 'Invalid channel ID');
  t.equal((await s.api('GET', '/streams/abc/email_address', alice)).status, 404, 'an integer in the path takes digits only: no route');

});
