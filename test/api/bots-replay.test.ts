// POST/PATCH/DELETE /bots by the rules of the real server's bot tests (feature level 247): names and
// usernames, bot types and the organization's bot creation policy, service bot parameters,
// default channels, deactivation, and who hears of a bot's changes.
import t from 'tap';
import { startTestServer, Role, basicAuth, type TestServer, type TestUser } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const create = (s: TestServer, who: TestUser, params: Record<string, unknown>) => s.api('POST', '/bots', who, params);

async function botQueue(s: TestServer, who: TestUser) {
  const registered = (await s.api('POST', '/register', who, { event_types: ['realm_bot'] })).body;
  let last = registered.last_event_id as number;
  return async () => {
    const polled = await s.api('GET', '/events', who, { queue_id: registered.queue_id, last_event_id: last, dont_block: true });
    const events = (polled.body.events as Array<Record<string, unknown>>).filter((e) => e.type !== 'heartbeat');
    if (events.length > 0) last = events[events.length - 1]!.id as number;
    return events.map(({ id: _id, ...rest }) => rest);
  };
}

t.test('creating a bot: names, usernames and types', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const guest = await s.user(Role.GUEST, 'Guest');
  const cases: Array<[TestUser, Record<string, unknown>, string]> = [
    [guest, { full_name: 'Guest bot', short_name: 'guestbot' }, 'Not allowed for guest users'],
    [hamlet, { full_name: 'My bot name', short_name: 'my\nbot' }, 'Bad name or username'],
    [hamlet, { full_name: 'My bot name', short_name: '  ' }, 'Bad name or username'],
    [hamlet, { full_name: 'The Bot', short_name: 'hambot', bot_type: 7 }, 'Invalid bot type'],
    // This server runs no embedded bots, as the real server's default configuration.
    [hamlet, { full_name: 'Embedded', short_name: 'emb', bot_type: 4, service_name: 'followup' }, 'Embedded bots are not enabled.'],
    [hamlet, { full_name: 'Outgoing', short_name: 'out', bot_type: 3, payload_url: JSON.stringify('http://127.0.0.1:5002'), interface_type: -1 }, 'Invalid interface type'],
    [hamlet, { full_name: 'Outgoing', short_name: 'out', bot_type: 3, payload_url: JSON.stringify('http://127.0.0.:5002') }, 'payload_url is not a URL'],
    [hamlet, { full_name: 'Configured', short_name: 'conf', bot_type: 2, config_data: { invalid: ['config', 'value'] } }, 'config_data contains a value that is not a string'],
    [hamlet, { full_name: 'Denmark bot', short_name: 'dk', default_sending_stream: 'missing' }, "Invalid channel name 'missing'"],
  ];
  for (const [who, params, msg] of cases) t.same((await create(s, who, params)).body, error(msg), JSON.stringify(params));

  const made = await create(s, hamlet, { full_name: 'The Bot of Hamlet', short_name: 'hambot', bot_type: '1' });
  t.equal(made.status, 200);
  t.match(made.body, {
    result: 'success', user_id: Number, api_key: String, avatar_url: String,
    default_sending_stream: null, default_events_register_stream: null, default_all_public_streams: false,
  });
  t.same((await create(s, hamlet, { full_name: 'whatever', short_name: 'hambot' })).body, error('Username already in use'));
  t.same((await create(s, hamlet, { full_name: 'The Bot of Hamlet', short_name: 'whatever' })).body, error('Name is already in use!'),
    'a bot\'s name is unique among active users');
  t.same((await create(s, hamlet, { full_name: 'Hamlet', short_name: 'another' })).body, error('Name is already in use!'), 'humans\' names too');
  const outgoing = await create(s, hamlet, { full_name: 'Outgoing', short_name: 'out', bot_type: 3, payload_url: JSON.stringify('http://127.0.0.1:5002'), interface_type: 2 });
  t.equal(outgoing.status, 200);
  t.equal((await s.api('GET', '/bots', hamlet)).body.bots.length, 2);
});

t.test('default channels and the bot creation policy', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const made = await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'Denmark' }, { name: 'Secret' }], invite_only: false });
  t.equal(made.status, 200);
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'Hidden' }], invite_only: true });

  const withDefaults = await create(s, hamlet, {
    full_name: 'Denmark bot', short_name: 'dk', default_sending_stream: 'Denmark', default_events_register_stream: 'Denmark', default_all_public_streams: true,
  });
  t.match(withDefaults.body, { default_sending_stream: 'Denmark', default_events_register_stream: 'Denmark', default_all_public_streams: true },
    'a public channel the owner is not subscribed to will do');
  t.match((await s.api('GET', '/bots', hamlet)).body.bots[0], { default_sending_stream: 'Denmark', default_all_public_streams: true });
  t.same((await create(s, hamlet, { full_name: 'Hidden bot', short_name: 'hid', default_events_register_stream: 'Hidden' })).body,
    error("Invalid channel name 'Hidden'"), 'a private channel the owner cannot reach will not');

  for (const [policy, params, refused] of [
    [2, { full_name: 'Generic', short_name: 'gen', bot_type: 1 }, true],
    [2, { full_name: 'Incoming', short_name: 'inc', bot_type: 2 }, false],
    [3, { full_name: 'Incoming two', short_name: 'inc2', bot_type: 2 }, true],
  ] as const) {
    await s.api('PATCH', '/realm', admin, { bot_creation_policy: policy });
    const r = await create(s, hamlet, params);
    if (refused) t.same(r.body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'), `policy ${policy}: ${params.short_name}`);
    else t.equal(r.status, 200, `policy ${policy}: ${params.short_name}`);
  }
  t.equal((await create(s, admin, { full_name: 'Admin generic', short_name: 'admgen', bot_type: 1 })).status, 200, 'administrators create any bot');
});

t.test('changing and deactivating a bot', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  const made = (await create(s, hamlet, { full_name: 'The Bot of Hamlet', short_name: 'hambot' })).body;
  const id = made.user_id as number;
  const bot: TestUser = { id, email: `hambot-bot@${new URL((await s.api('GET', '/server_settings', null)).body.realm_uri).hostname}`, apiKey: made.api_key, auth: '' };
  bot.auth = basicAuth(bot.email, bot.apiKey);

  t.same((await s.api('PATCH', `/bots/${id}`, othello, { full_name: 'Fred' })).body, error('Insufficient permission'));
  t.same((await s.api('POST', `/bots/${id}/api_key/regenerate`, othello, {})).body, error('Insufficient permission'));
  t.same((await s.api('DELETE', `/bots/${hamlet.id}`, othello, {})).body, error('No such bot'), 'a human is no bot');
  t.same((await s.api('DELETE', '/bots/1000', hamlet, {})).body, error('No such bot'));
  t.same((await s.api('PATCH', `/bots/${id}`, hamlet, { full_name: 'Othello' })).body, error('Name is already in use!'));
  t.same((await s.api('PATCH', `/bots/${id}`, hamlet, { bot_owner_id: 999999 })).body, error('Failed to change owner, no such user'));
  t.same((await s.api('PATCH', `/bots/${id}`, hamlet, { bot_owner_id: id })).body, error("Failed to change owner, bots can't own other bots"));
  t.same((await s.api('PATCH', `/bots/${id}`, hamlet, { default_sending_stream: 'missing' })).body, error("Invalid channel name 'missing'"));
  const own = await s.api('PATCH', `/bots/${id}`, bot, { full_name: 'Self' });
  t.equal(own.status, 400, 'a bot does not change itself here');

  // The owner hears of the bot's changes; someone who owns it only later hears nothing of them.
  const hamletHears = await botQueue(s, hamlet);
  const othelloHears = await botQueue(s, othello);
  t.equal((await s.api('PATCH', `/bots/${id}`, hamlet, { full_name: '   The Bot of Hamlet ' })).status, 200, 'its own name, padded, changes nothing');
  t.match((await s.api('PATCH', `/bots/${id}`, hamlet, { full_name: 'Hal' })).body, { full_name: 'Hal' });
  t.match((await s.api('PATCH', `/bots/${id}`, hamlet, { default_all_public_streams: true })).body, { default_all_public_streams: true });
  t.match((await s.api('PATCH', `/bots/${id}`, hamlet, { bot_owner_id: othello.id })).body, { bot_owner: othello.email });
  t.same(await hamletHears(), [
    { type: 'realm_bot', op: 'update', bot: { user_id: id, full_name: 'Hal' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: id, default_all_public_streams: true } },
    { type: 'realm_bot', op: 'delete', bot: { user_id: id } },
  ]);
  const othelloEvents = await othelloHears();
  t.same(othelloEvents.map((e) => [e.op, (e.bot as { user_id: number }).user_id]), [['add', id]], 'the new owner gets the bot, not its earlier changes');

  t.same((await s.api('DELETE', `/bots/${id}`, othello, {})).body, { result: 'success', msg: '' });
  t.same((await s.api('DELETE', `/bots/${id}`, othello, {})).body, { result: 'success', msg: '' }, 'deactivating twice is fine');
  t.same((await s.api('GET', '/bots', othello)).body.bots, []);
});

t.test('the server\'s own bots are no organization\'s bots', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const systemBot = await s.platform.db.selectFrom('users').select('id').where('is_system_bot', '=', true).executeTakeFirstOrThrow();
  t.same((await s.api('DELETE', `/bots/${systemBot.id}`, s.owner, {})).body, error('No such bot'));
  t.same((await s.api('PATCH', `/bots/${systemBot.id}`, s.owner, { full_name: 'Mine' })).body, error('No such bot'));
});

t.test('a bot created with its defaults replays to identical read tables', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  await s.api('POST', '/users/me/subscriptions', hamlet, { subscriptions: [{ name: 'Denmark' }] });
  const made = await create(s, hamlet, { full_name: 'Denmark bot', short_name: 'dk', default_sending_stream: 'Denmark', default_all_public_streams: true });
  t.equal(made.status, 200);
  const versions = await s.platform.db.selectFrom('events').select(['type', 'stream_version']).where('stream_id', '=', `user-${made.body.user_id}`).orderBy('position').execute();
  t.same(versions.map((v) => v.type), ['UserCreated', 'BotDefaultChanged', 'BotDefaultChanged'], 'one command: the bot and its defaults');
  t.same(versions.map((v) => v.stream_version), [...versions.keys()].map((i) => versions[0]!.stream_version + i), 'consecutive stream versions');
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
});
