import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('POST /zcommand: the web app commands the real server answers', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const z = (command: unknown) => s.api('POST', '/zcommand', alice, command === undefined ? {} : { command });
  const settings = async () => (await s.api('POST', '/register', alice, { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } })).body.user_settings;

  t.same((await z('/ping')).body, { result: 'success', msg: '' });
  const register = { event_types: ['user_settings'], fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } };
  const events = await verifyAction(t, s, alice, async () => {
    const r = await z('/dark');
    t.same(r.body, { result: 'success', msg: 'Changed to dark theme! To revert dark theme, type `/light`.' });
    return r;
  }, { register });
  t.match(events, [{ type: 'user_settings', op: 'update', property: 'color_scheme', value: 2 }], 'the change reaches clients');
  t.equal((await settings()).color_scheme, 2);
  t.equal((await z('/dark')).body.msg, 'You are still in dark theme.');
  t.equal((await z('/light')).body.msg, 'Changed to light theme! To revert light theme, type `/dark`.');
  t.equal((await settings()).color_scheme, 3);
  t.equal((await z('/light')).body.msg, 'You are still in light theme.');
  t.equal((await z('/fixed-width')).body.msg, 'You are still in fixed width mode.', 'fixed width is the default');
  t.equal((await z('/fluid-width')).body.msg, 'Changed to fluid-width mode! To revert fluid-width mode, type `/fixed-width`.');
  t.equal((await settings()).fluid_layout_width, true);
  t.equal((await z('/fluid-width')).body.msg, 'You are still in fluid width mode.');
  t.equal((await z('/fixed-width')).body.msg, 'Changed to fixed-width mode! To revert fixed-width mode, type `/fluid-width`.');

  const error = async (command: unknown, msg: string) => {
    const r = await z(command);
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
  };
  await error('dark', 'There should be a leading slash in the zcommand.');
  await error('/night', 'No such command: night');
  await error('/constructor', 'No such command: constructor');
  await error('/', 'No such command: ');
  t.equal((await z(undefined)).body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal((await s.api('POST', '/zcommand', null, { command: '/ping' })).status, 401);
});

t.test('POST /calls/zoom/create: no video call service is configured', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const r = await s.api('POST', '/calls/zoom/create', alice, { is_video_call: false });
  t.equal(r.status, 400);
  t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Zoom credentials have not been configured' });
  t.equal((await s.api('POST', '/calls/zoom/create', alice, { is_video_call: 'maybe' })).status, 400);
  t.equal((await s.api('POST', '/calls/zoom/create', null, {})).status, 401);
});

t.test('POST /users/me/tutorial_status: started or finished, human users only', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: alice.id });
  const status = async () => (await s.platform.db.selectFrom('tutorial_status').select('status').where('user_id', '=', alice.id).executeTakeFirst())?.status;
  t.equal(await status(), undefined);
  t.equal((await s.api('POST', '/users/me/tutorial_status', alice, { status: 'started' })).status, 200);
  t.equal(await status(), 'started');
  t.equal((await s.api('POST', '/users/me/tutorial_status', alice, { status: 'finished' })).status, 200);
  t.equal(await status(), 'finished');
  t.same((await s.api('POST', '/users/me/tutorial_status', alice, { status: 'skipped' })).body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid status' });
  t.equal((await s.api('POST', '/users/me/tutorial_status', alice, {})).body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal((await s.api('POST', '/users/me/tutorial_status', bot, { status: 'started' })).body.msg, 'This endpoint does not accept bot requests.');
  t.equal(await status(), 'finished', 'refused requests changed nothing');
  const stored = await s.platform.db.selectFrom('events').select('type').where('stream_id', '=', `tutorial-${alice.id}`).execute();
  t.equal(stored.length, 2, 'kept as events');
});
