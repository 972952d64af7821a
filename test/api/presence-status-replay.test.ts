import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/channels-fixture.js';

const error = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

t.test('POST /users/me/status: the text is trimmed before its length is checked', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  t.same((await s.api('POST', '/users/me/status', hamlet, { status_text: 'x'.repeat(61) })).body, error('status_text is too long (limit: 60 characters)'));
  t.same((await s.api('POST', '/users/me/status', hamlet, { status_text: ` ${'é'.repeat(61)} ` })).body, error('status_text is too long (limit: 60 characters)'),
    'counted in characters');
  const events = await verifyAction(t, s, othello, () => s.api('POST', '/users/me/status', hamlet, { status_text: `   ${'x'.repeat(60)}   ` }),
    { register: { fetch_event_types: ['user_status'], event_types: ['user_status'] } });
  t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'user_status', user_id: hamlet.id, status_text: 'x'.repeat(60) }]);
  t.same((await s.api('POST', '/users/me/status', hamlet, { emoji_code: '1f697', status_text: 'car' })).body,
    error('Client must pass emoji_name if they pass either emoji_code or reaction_type.'));
  t.same((await s.api('POST', '/users/me/status', hamlet, {})).body, error('Client did not pass any new values.'));
});

t.test('limited user access: a guest sees and hears the statuses of accessible users only', async (t) => {
  const s = await startTestServer(t);
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const guest = await s.user(Role.GUEST, 'Guest');
  const shared = await s.user(Role.MEMBER, 'Shared');
  const stranger = await s.user(Role.MEMBER, 'Stranger');
  await createChannel(s, s.owner, 'common', [guest, shared]);
  await s.api('POST', '/users/me/status', stranger, { status_text: 'hidden' });
  await s.api('POST', '/users/me/status', shared, { status_text: 'visible' });
  const statusOf = async () => (await s.api('POST', '/register', guest, { fetch_event_types: ['user_status'] })).body.user_status;
  t.same(Object.keys(await statusOf()).sort(), [String(shared.id), String(stranger.id)].sort(), 'everyone is accessible by default');

  t.equal((await s.api('PATCH', '/realm', s.owner, { can_access_all_users_group: groups.find((g) => g.name === 'role:members')!.id })).status, 200);
  t.same(await statusOf(), { [shared.id]: { status_text: 'visible' } });
  const events = await verifyAction(t, s, guest, async () => {
    await s.api('POST', '/users/me/status', stranger, { status_text: 'still hidden' });
    await s.api('POST', '/users/me/status', shared, { status_text: 'news' });
  }, { register: { fetch_event_types: ['user_status'], event_types: ['user_status'] } });
  t.same(events.map((e) => e.user_id), [shared.id]);
  const member = await s.api('POST', '/register', s.owner, { fetch_event_types: ['user_status'] });
  t.same(member.body.user_status[stranger.id], { status_text: 'still hidden' }, 'members are not limited');
});

t.test('GET /users/{id or email}/presence: its errors', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const bot = await s.user(Role.MEMBER, 'Hamlet Bot', { bot_type: 1, bot_owner_id: hamlet.id });
  t.same((await s.api('POST', '/users/me/presence', hamlet, { status: 'foo' })).body, error('Invalid status: foo'));
  t.same((await s.api('POST', '/users/me/presence', bot, { status: 'active' })).body, error('This endpoint does not accept bot requests.'));
  t.same((await s.api('GET', '/users/nonexistence@example.com/presence', hamlet)).body, error('No such user'));
  t.same((await s.api('GET', `/users/${cordelia.email}/presence`, hamlet)).body, error(`No presence data for ${cordelia.email}`));
  t.same((await s.api('GET', `/users/${cordelia.id}/presence`, hamlet)).body, error(`No presence data for ${cordelia.id}`));
  t.same((await s.api('GET', `/users/${bot.id}/presence`, hamlet)).body, error('Presence is not supported for bot users.'));
  await s.api('DELETE', `/users/${cordelia.id}`, s.owner);
  t.same((await s.api('GET', `/users/${cordelia.email}/presence`, hamlet)).body, error('No such user'), 'a deactivated user is no user here');
  const pinged = await s.api('POST', '/users/me/presence', hamlet, { status: 'active', ping_only: true });
  t.same(pinged.body, { result: 'success', msg: '' }, 'ping_only answers nothing more');
  const own = await s.api('GET', `/users/${hamlet.id}/presence`, hamlet);
  t.same(Object.keys(own.body.presence).sort(), ['aggregated', 'website']);
  t.same(Object.keys(own.body.presence.website).sort(), ['status', 'timestamp']);
});
