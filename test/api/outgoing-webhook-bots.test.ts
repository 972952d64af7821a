// Outgoing webhook bots' services, as the real server keeps and shows them (feature level 247):
// POST /bots with payload_url/interface_type (add_service), PATCH /bots/{id} with service_payload_url/
// service_interface (do_update_outgoing_webhook_service: a realm_bot update with the whole service),
// realm_bots' services for the bot's owner and the administrators (get_owned_bot_dicts).
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const register = { event_types: ['realm_bot', 'realm_user'], fetch_event_types: ['realm_bot', 'realm_user'] };
const url = (u: string) => JSON.stringify(u);

async function createOutgoing(s: TestServer, owner: TestUser, params: Record<string, unknown> = {}) {
  const r = await s.api('POST', '/bots', owner, { full_name: 'Outgoing Bot', short_name: 'outgoing', bot_type: 3, payload_url: url('https://bot.example.com/'), ...params });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body as { user_id: number };
}

t.test('an outgoing webhook bot gets a service, shown to its owner and the administrators', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');

  let botId = 0;
  const added = await verifyAction(t, s, admin, async () => { botId = (await createOutgoing(s, alice, { interface_type: 2 })).user_id; }, { register });
  t.match(added, [{ type: 'realm_user', op: 'add' }, { type: 'realm_bot', op: 'add', bot: { user_id: Number, bot_type: 3, services: [{ base_url: 'https://bot.example.com/', interface: 2, token: String }] } }]);
  const token = added[1]!.bot.services[0].token as string;
  t.match(token, /^[A-Za-z0-9]{32}$/, 'a token of its own, like an API key');

  for (const viewer of [alice, admin]) {
    const bots = (await s.api('POST', '/register', viewer, register)).body.realm_bots;
    t.same(bots.find((b: { user_id: number }) => b.user_id === botId).services, [{ base_url: 'https://bot.example.com/', interface: 2, token }], 'realm_bots shows the service');
  }
  t.same((await s.api('POST', '/register', bob, register)).body.realm_bots, [], 'another member sees no bot, so no token');
  // As the real server's GET /bots: no services there.
  t.notOk('services' in (await s.api('GET', '/bots', alice)).body.bots[0]);

  // The service's name: the request's service_name, else the short name.
  const named = await createOutgoing(s, alice, { full_name: 'Named Bot', short_name: 'named', service_name: 'weather' });
  const rows = await s.platform.db.selectFrom('bot_services').select(['user_id', 'name', 'interface']).orderBy('user_id').execute();
  t.same(rows, [{ user_id: botId, name: 'outgoing', interface: 2 }, { user_id: named.user_id, name: 'weather', interface: 1 }]);

  // Other bot types have no service.
  const generic = (await s.api('POST', '/bots', alice, { full_name: 'Plain Bot', short_name: 'plain' })).body.user_id as number;
  const plain = (await s.api('POST', '/register', alice, register)).body.realm_bots.find((b: { user_id: number }) => b.user_id === generic);
  t.same(plain.services, []);
});

t.test('PATCH /bots/{id}: service_payload_url and service_interface', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const { user_id: botId } = await createOutgoing(s, alice);
  const token = (await s.platform.db.selectFrom('bot_services').select('token').where('user_id', '=', botId).executeTakeFirstOrThrow()).token;

  let answer: { status: number; body: any } | undefined;
  for (const viewer of [alice, admin]) {
    const events = await verifyAction(t, s, viewer, async () => {
      answer = await s.api('PATCH', `/bots/${botId}`, alice, { service_payload_url: url(`https://new.example.com/${viewer.id}`), service_interface: 2 });
    }, { register });
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm_bot', op: 'update', bot: { user_id: botId, services: [{ base_url: `https://new.example.com/${viewer.id}`, interface: 2, token }] } }]);
  }
  t.match(answer!.body, { result: 'success', full_name: 'Outgoing Bot', service_interface: 2, service_payload_url: `https://new.example.com/${admin.id}`, config_data: null });
  t.same(await verifyAction(t, s, bob, () => s.api('PATCH', `/bots/${botId}`, admin, { service_payload_url: url('https://third.example.com/') }), { register }), [],
    'others hear nothing');
  t.same((await s.platform.db.selectFrom('bot_services').select(['base_url', 'interface']).where('user_id', '=', botId).execute()),
    [{ base_url: 'https://third.example.com/', interface: 1 }], 'service_interface defaults to 1 (generic)');
  const same = await verifyAction(t, s, alice, () => s.api('PATCH', `/bots/${botId}`, alice, { service_payload_url: url('https://third.example.com/') }), { register });
  t.equal(same.length, 1, 'the real server announces the service even when nothing changed');

  const other = (await s.api('PATCH', `/bots/${botId}`, alice, { full_name: 'Renamed Bot' })).body;
  t.match(other, { service_interface: 1, service_payload_url: null, config_data: null }, 'the answer echoes what the request said');

  const refused = async (who: TestUser, params: Record<string, unknown>, msg: string, id = botId) => {
    const r = await s.api('PATCH', `/bots/${id}`, who, params);
    t.same([r.status, r.body.msg], [400, msg], JSON.stringify(params));
  };
  await refused(alice, { service_payload_url: url('ftp://files.example.com/') }, 'service_payload_url is not a URL');
  await refused(alice, { service_payload_url: url('') }, 'service_payload_url is not a URL');
  await refused(alice, { service_payload_url: '5' }, 'service_payload_url is not a URL');
  await refused(alice, { service_payload_url: url('https://ok.example.com/'), service_interface: 3 }, 'Invalid interface type');
  await refused(bob, { service_payload_url: url('https://ok.example.com/') }, 'Insufficient permission');
  await refused(alice, { config_data: JSON.stringify({ key: 5 }) }, 'config_data["key"] is not a string');
  const generic = (await s.api('POST', '/bots', alice, { full_name: 'Plain Bot', short_name: 'plain' })).body.user_id as number;
  await refused(alice, { service_payload_url: url('https://ok.example.com/') }, 'This bot has no outgoing webhook service', generic);
  t.same((await s.platform.db.selectFrom('bot_services').select('base_url').where('user_id', '=', botId).execute()), [{ base_url: 'https://third.example.com/' }],
    'a refused request changes nothing');
});

t.test('a new owner gets the bot with its service; a rebuild keeps the services', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const { user_id: botId } = await createOutgoing(s, alice);
  await s.api('PATCH', `/bots/${botId}`, alice, { service_payload_url: url('https://moved.example.com/') });
  const gained = await verifyAction(t, s, bob, () => s.api('PATCH', `/bots/${botId}`, alice, { bot_owner_id: bob.id }), { register });
  // As send_bot_owner_update_events: realm_bot add for the new owner, then the realm_user update.
  t.match(gained, [{ type: 'realm_bot', op: 'add', bot: { user_id: botId, services: [{ base_url: 'https://moved.example.com/', interface: 1 }] } }, { type: 'realm_user' }]);

  const before = await s.platform.db.selectFrom('bot_services').selectAll().execute();
  await s.platform.projections.rebuild();
  t.same(await s.platform.db.selectFrom('bot_services').selectAll().execute(), before, 'folded again from the log');
});
