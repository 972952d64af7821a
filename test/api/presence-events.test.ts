import t from 'tap';
import { startTestServer, Role, sql } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { agePresence, ping } from '../helpers/presence-fixture.js';

const legacy = { event_types: ['presence'], fetch_event_types: ['presence'] };
const slim = { ...legacy, slim_presence: true };

t.test('presence events: legacy and slim queues', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  await sql`UPDATE users SET date_joined = ${new Date(Date.now() - 86_400_000).toISOString()} WHERE id = ${ann.id}`.execute(s.platform.db);

  // First ping: came online.
  const first = await verifyAction(t, s, cy, () => ping(s, ann, { ping_only: true }), { register: legacy });
  t.match(first, [{ type: 'presence', user_id: ann.id, email: ann.email, presence: { website: { client: 'website', status: 'active', pushable: false } } }]);
  t.type(first[0]!.server_timestamp, 'number');

  // Pings that change nothing others see deliver nothing.
  const quiet = await verifyAction(t, s, cy, async () => {
    await ping(s, ann);
    await ping(s, ann, { status: 'idle' });
  }, { register: slim });
  t.same(quiet, []);

  // Went idle (last activity 80 s ago): the slim queue's event has no email.
  await agePresence(s, ann, 80);
  const idle = await verifyAction(t, s, cy, () => ping(s, ann, { status: 'idle' }), { register: slim });
  t.match(idle, [{ type: 'presence', user_id: ann.id, presence: { website: { status: 'idle' } } }]);
  t.notOk('email' in idle[0]!, 'slim presence events carry no email');

  // Back active: both forms.
  await agePresence(s, ann, 100);
  await verifyAction(t, s, cy, () => ping(s, ann), { register: slim, expect: (e) => t.match(e, [{ type: 'presence', presence: { website: { status: 'active' } } }]) });
  await agePresence(s, ann, 100);
  await verifyAction(t, s, cy, () => ping(s, ann, { status: 'idle' }), { register: legacy, expect: (e) => t.match(e, [{ email: ann.email, presence: { website: { status: 'idle' } } }]) });
});

t.test('presence_enabled: turning it off or on is announced at once', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  await sql`UPDATE users SET date_joined = ${new Date(Date.now() - 86_400_000).toISOString()} WHERE id = ${ann.id}`.execute(s.platform.db);
  await ping(s, ann);
  const off = await verifyAction(t, s, cy, () => s.api('PATCH', '/settings', ann, { presence_enabled: false }), { register: legacy });
  t.match(off, [{ type: 'presence', user_id: ann.id, presence: { website: { status: 'idle' } } }]);
  t.ok(Date.now() / 1000 - off[0]!.presence.website.timestamp >= 260 - 2, 'shown as last seen before the offline threshold');
  const quiet = await verifyAction(t, s, cy, () => ping(s, ann), { register: legacy });
  t.same(quiet, [], 'pings while off deliver nothing');
  const on = await verifyAction(t, s, cy, () => s.api('PATCH', '/settings', ann, { presence_enabled: true }), { register: legacy });
  t.match(on, [{ type: 'presence', user_id: ann.id, presence: { website: { status: 'active' } } }]);
});

t.test('user_status events', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  const register = { event_types: ['user_status', 'user_settings', 'presence'], fetch_event_types: ['user_status', 'user_settings', 'presence'] };
  const status = (params: Record<string, unknown>) => s.api('POST', '/users/me/status', ann, params);

  const set = await verifyAction(t, s, cy, () => status({ status_text: 'out to lunch', emoji_name: 'car' }), { register });
  t.same(set.map(({ id: _id, ...e }) => e), [{ type: 'user_status', user_id: ann.id, status_text: 'out to lunch', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' }]);
  const text = await verifyAction(t, s, cy, () => status({ status_text: 'back soon' }), { register });
  t.same(text.map(({ id: _id, ...e }) => e), [{ type: 'user_status', user_id: ann.id, status_text: 'back soon' }], 'only what changed');
  await verifyAction(t, s, cy, () => status({ emoji_name: '' }), { register });

  // away: the user's own queue gets the settings change; everyone gets the presence and status events.
  const away = await verifyAction(t, s, ann, () => status({ away: true }), { register });
  t.match(away.map((e) => e.type).sort(), ['presence', 'user_settings', 'user_status']);
  t.match(away.find((e) => e.type === 'user_status'), { away: true, user_id: ann.id });
  const seen = await verifyAction(t, s, cy, () => status({ away: false, status_text: '' }), { register });
  t.match(seen.find((e) => e.type === 'user_status'), { away: false, status_text: '' });
  t.notOk(seen.some((e) => e.type === 'user_settings'), "others do not get Ann's settings");
});
