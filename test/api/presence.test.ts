import t from 'tap';
import { startTestServer, Role, sql } from '../helpers/server.js';
import { agePresence, logLength, ping, presenceEvents } from '../helpers/presence-fixture.js';

const now = () => Date.now() / 1000;

t.test('POST /users/me/presence: parameters and errors', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: ann.id });

  const missing = await s.api('POST', '/users/me/presence', ann, {});
  t.match(missing, { status: 400, body: { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'status' argument" } });
  const invalid = await ping(s, ann, { status: 'away' });
  t.match(invalid, { status: 400, body: { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid status: away' } });
  const badBool = await ping(s, ann, { ping_only: 'maybe' });
  t.equal(badBool.status, 400, 'ping_only must be a boolean');
  const fromBot = await ping(s, bot);
  t.match(fromBot, { status: 400, body: { code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' } });
  t.same(await presenceEvents(s, ann.id), [], 'refused pings log nothing');

  const only = await ping(s, ann, { ping_only: true, new_user_input: true });
  t.same(only.body, { result: 'success', msg: '' }, 'ping_only returns no presences');

  const legacy = await ping(s, ann, { status: 'idle' });
  t.equal(legacy.status, 200);
  t.ok(Math.abs(legacy.body.server_timestamp - now()) < 5, 'server_timestamp is the server time, with a fraction');
  const mine = legacy.body.presences[ann.email];
  t.same(Object.keys(mine).sort(), ['aggregated', 'website'], 'legacy entry: website and aggregated');
  t.match(mine.website, { client: 'website', status: 'active', pushable: false }, 'the active first ping stays active');
  t.same(mine.aggregated, { client: 'website', status: 'active', timestamp: mine.website.timestamp });
  t.notOk(legacy.body.presences[bot.email], 'bots have no presence');

  const slim = await ping(s, ann, { slim_presence: true });
  const entry = slim.body.presences[String(ann.id)];
  t.same(Object.keys(entry).sort(), ['active_timestamp', 'idle_timestamp'], 'slim entry keyed by user id');
  t.ok(entry.active_timestamp <= entry.idle_timestamp && Math.abs(entry.idle_timestamp - now()) < 5);
  t.notOk(slim.body.presences[ann.email]);
});

t.test('a first idle ping: idle, never active (timestamps default to the join date)', async (t) => {
  const s = await startTestServer(t);
  const bob = await s.user(Role.MEMBER, 'Bob');
  // Joined an hour ago (a user who joined just now looks active: the join date stands in for activity).
  await sql`UPDATE users SET date_joined = ${new Date(Date.now() - 3600_000).toISOString()} WHERE id = ${bob.id}`.execute(s.platform.db);
  const res = await ping(s, bob, { status: 'idle', slim_presence: true });
  const joined = await s.platform.db.selectFrom('users').select('date_joined').where('id', '=', bob.id).executeTakeFirstOrThrow();
  const entry = res.body.presences[String(bob.id)];
  t.equal(entry.active_timestamp, Math.floor(Date.parse(joined.date_joined) / 1000));
  const legacy = (await s.api('GET', '/realm/presence', s.owner)).body.presences[bob.email];
  t.match(legacy.aggregated, { status: 'idle', timestamp: entry.idle_timestamp });
  t.match(await presenceEvents(s, bob.id), [{ status: 'idle', last_active_time: null }]);
});

t.test('100 pings with unchanged state append nothing to the log', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  await ping(s, ann);
  const before = await logLength(s);
  for (let i = 0; i < 100; i++) {
    const res = await ping(s, ann, { status: i % 3 === 0 ? 'idle' : 'active', ping_only: i % 2 === 0 });
    if (res.status !== 200) t.fail(`ping ${i}: ${JSON.stringify(res.body)}`);
  }
  t.equal(await logLength(s), before, 'no event appended');
  t.equal((await presenceEvents(s, ann.id)).length, 1, 'only the first ping was logged');
});

t.test('what others see changes: online, idle, back after offline', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  await ping(s, ann);
  t.equal((await presenceEvents(s, ann.id)).length, 1, 'first ping: came online');

  // Active a minute ago: an idle ping does not make her look idle yet, an active one is no news.
  await agePresence(s, ann, 60);
  await ping(s, ann, { status: 'idle' });
  await ping(s, ann);
  t.equal((await presenceEvents(s, ann.id)).length, 1, 'within the activity offset nothing is logged');

  // Last activity 80 s ago (over the 70 s offset): an idle ping is a visible change.
  await agePresence(s, ann, 80);
  const lastActive = Number((await s.platform.db.selectFrom('presence_last_seen').select('last_active_time').where('user_id', '=', ann.id).executeTakeFirstOrThrow()).last_active_time);
  await ping(s, ann, { status: 'idle' });
  let logged = await presenceEvents(s, ann.id);
  t.match(logged[1], { status: 'idle', last_active_time: lastActive }, 'went idle: logged with the old activity time');
  await ping(s, ann, { status: 'idle' });
  t.equal((await presenceEvents(s, ann.id)).length, 2, 'still idle: nothing more');
  const shown = (await s.api('GET', '/realm/presence', s.owner)).body.presences[ann.email];
  t.equal(shown.aggregated.status, 'idle');

  // Offline (no ping for 3 minutes), then idle again: she is back.
  await agePresence(s, ann, 180);
  await ping(s, ann, { status: 'idle' });
  logged = await presenceEvents(s, ann.id);
  t.equal(logged.length, 3);
  t.equal(logged[2]!.status, 'idle', 'back after offline, idle');

  // Active again long after the last activity: came online.
  await ping(s, ann);
  logged = await presenceEvents(s, ann.id);
  t.match(logged[3], { status: 'active' });
  t.equal(logged[3]!.last_active_time, logged[3]!.last_connected_time);
});

t.test('GET /realm/presence and GET /users/{user_id_or_email}/presence', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: ann.id });
  await ping(s, ann);

  const realm = await s.api('GET', '/realm/presence', cy);
  t.equal(realm.status, 200);
  t.same(Object.keys(realm.body.presences), [ann.email], 'only users with presence data');
  t.match(realm.body.presences[ann.email].website, { client: 'website', status: 'active', pushable: false });
  t.type(realm.body.server_timestamp, 'number');

  for (const key of [String(ann.id), ann.email]) {
    const one = await s.api('GET', `/users/${encodeURIComponent(key)}/presence`, cy);
    t.equal(one.status, 200, key);
    t.same(Object.keys(one.body.presence).sort(), ['aggregated', 'website']);
    t.same(Object.keys(one.body.presence.website).sort(), ['status', 'timestamp'], 'only status and timestamp');
    t.equal(one.body.presence.aggregated.status, 'active');
  }
  t.match(await s.api('GET', '/users/nobody@example.com/presence', cy), { status: 400, body: { msg: 'No such user', code: 'BAD_REQUEST' } });
  t.match(await s.api('GET', '/users/999999/presence', cy), { status: 400, body: { msg: 'No such user' } });
  t.match(await s.api('GET', `/users/${bot.id}/presence`, cy), { status: 400, body: { msg: 'Presence is not supported for bot users.' } });
  t.match(await s.api('GET', `/users/${cy.id}/presence`, ann), { status: 400, body: { msg: `No presence data for ${cy.id}` } });
  t.match(await s.api('GET', `/users/${cy.email}/presence`, ann), { status: 400, body: { msg: `No presence data for ${cy.email}` } });

  // Stale data: aggregated says offline, the client entry keeps its status.
  await agePresence(s, ann, 600);
  const stale = await s.api('GET', `/users/${ann.id}/presence`, cy);
  t.equal(stale.body.presence.aggregated.status, 'offline');
  t.equal(stale.body.presence.website.status, 'active');

  // Deactivated users are no such user, and leave the realm dictionary.
  await s.api('DELETE', `/users/${ann.id}`, s.owner);
  t.match(await s.api('GET', `/users/${ann.id}/presence`, cy), { status: 400, body: { msg: 'No such user' } });
  t.same((await s.api('GET', '/realm/presence', cy)).body.presences, {});

  // An organization with presence turned off shows no presence at all.
  await ping(s, cy);
  const meta = { actor_id: s.owner.id, realm_id: 1, client: 'test', request_id: 'presence-off', time: new Date().toISOString() };
  await s.platform.commands.run(meta, async () => ({
    appends: [{ streamId: 'realm-presence-test', expectedVersion: undefined, events: [{ type: 'RealmPropertiesChanged', data: { realm_id: 1, changes: { presence_disabled: true } } }] }],
    result: undefined,
  }));
  t.same((await s.api('GET', '/realm/presence', cy)).body.presences, {});
  t.same((await ping(s, cy)).body.presences, {});
});

t.test('presence_enabled off: pings are not recorded and others see the user offline', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  await sql`UPDATE users SET date_joined = ${new Date(Date.now() - 86_400_000).toISOString()} WHERE id = ${ann.id}`.execute(s.platform.db);
  await ping(s, ann);
  const off = await s.api('PATCH', '/settings', ann, { presence_enabled: false });
  t.equal(off.status, 200);
  const before = await logLength(s);
  await ping(s, ann);
  await ping(s, ann, { status: 'idle' });
  t.equal(await logLength(s), before, 'pings while presence is off log nothing');
  const seen = (await s.api('GET', '/realm/presence', cy)).body.presences[ann.email];
  t.equal(seen.aggregated.status, 'idle');
  t.ok(now() - seen.aggregated.timestamp > 140 + 100, 'last seen before the offline threshold: offline');
  t.equal((await s.api('GET', `/users/${ann.id}/presence`, cy)).body.presence.aggregated.status, 'offline');

  await s.api('PATCH', '/settings', ann, { presence_enabled: true });
  const back = (await s.api('GET', '/realm/presence', cy)).body.presences[ann.email];
  t.equal(back.aggregated.status, 'active', 'turning it on shows the user active at once');
  t.ok(now() - back.aggregated.timestamp < 5);
});

t.test('POST /users/me/status: rules and errors', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: ann.id });
  const status = (params: Record<string, unknown>, who = ann) => s.api('POST', '/users/me/status', who, params);
  const err = (msg: string) => ({ status: 400, body: { result: 'error', code: 'BAD_REQUEST', msg } });

  t.match(await status({}), err('Client did not pass any new values.'));
  t.match(await status({ emoji_code: '1f697' }), err('Client did not pass any new values.'));
  t.match(await status({ status_text: 'x', emoji_code: '1f697' }), err('Client must pass emoji_name if they pass either emoji_code or reaction_type.'));
  t.match(await status({ status_text: 'x', reaction_type: 'unicode_emoji' }), err('Client must pass emoji_name if they pass either emoji_code or reaction_type.'));
  t.match(await status({ status_text: 'a'.repeat(61) }), err('status_text is too long (limit: 60 characters)'));
  t.match(await status({ emoji_name: 'no_such_emoji' }), err("Emoji 'no_such_emoji' does not exist"));
  t.match(await status({ emoji_name: 'car', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }), err('Invalid emoji code.'));
  t.match(await status({ emoji_name: 'smile', emoji_code: '1f697', reaction_type: 'unicode_emoji' }), err('Invalid emoji name.'));
  t.match(await status({ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'realm_emoji' }), err('Invalid custom emoji.'));
  t.match(await status({ emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'other' }), err('Invalid emoji type.'));
  t.match(await status({ emoji_name: 'car', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }), err('Invalid emoji name.'));
  t.match(await status({ away: 'perhaps' }), { status: 400 });
  t.match(await status({ status_text: 'hi' }, bot), err('This endpoint does not accept bot requests.'));
  t.equal((await s.platform.db.selectFrom('events').select('position').where('type', '=', 'UserStatusChanged').execute()).length, 0, 'refusals log nothing');

  // 60 characters (code points) fit; surrounding spaces are trimmed.
  t.equal((await status({ status_text: '🚗'.repeat(60) })).status, 200);
  t.equal((await status({ status_text: '  out to lunch  ', emoji_name: 'car' })).status, 200);
  let reg = await s.api('POST', '/register', ann, { fetch_event_types: ['user_status'] });
  t.same(reg.body.user_status[String(ann.id)], { status_text: 'out to lunch', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });

  // Only the named fields change; "" clears.
  await status({ emoji_name: 'zulip' });
  reg = await s.api('POST', '/register', ann, { fetch_event_types: ['user_status'] });
  t.same(reg.body.user_status[String(ann.id)], { status_text: 'out to lunch', emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
  await status({ status_text: '', emoji_name: '' });
  reg = await s.api('POST', '/register', ann, { fetch_event_types: ['user_status'] });
  t.same(reg.body.user_status, {}, 'a cleared status is left out');

  // away is presence_enabled inverted.
  await status({ away: true });
  reg = await s.api('POST', '/register', ann, { fetch_event_types: ['user_status', 'user_settings'] });
  t.same(reg.body.user_status[String(ann.id)], { away: true });
  t.equal(reg.body.user_settings.presence_enabled, false);
  await status({ away: false });
  reg = await s.api('POST', '/register', ann, { fetch_event_types: ['user_status', 'user_settings'] });
  t.same(reg.body.user_status, {});
  t.equal(reg.body.user_settings.presence_enabled, true);
});

t.test('concurrent pings of one user log one change', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const replies = await Promise.all(Array.from({ length: 10 }, () => ping(s, ann, { ping_only: true })));
  t.same(replies.map((r) => r.status), Array(10).fill(200));
  t.equal((await presenceEvents(s, ann.id)).length, 1, 'came online once');
  await agePresence(s, ann, 100);
  await Promise.all(Array.from({ length: 10 }, () => ping(s, ann, { status: 'idle', ping_only: true })));
  t.equal((await presenceEvents(s, ann.id)).length, 2, 'went idle once');
});

t.test('hostile input gets an error envelope and logs nothing', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const before = await logLength(s);
  t.match(await s.api('GET', '/users/9223372036854775808/presence', ann), { status: 400, body: { result: 'error' } });
  t.match(await s.api('POST', '/users/me/status', ann, { status_text: 'a\u0000b' }), { status: 400, body: { result: 'error' } });
  t.match(await ping(s, ann, { status: 'active\u0000' }), { status: 400, body: { result: 'error' } });
  t.match(await s.api('POST', '/users/me/status', ann, { emoji_name: 'x'.repeat(5000) }), { status: 400, body: { msg: `Emoji '${'x'.repeat(5000)}' does not exist` } });
  t.equal(await logLength(s), before);
});
