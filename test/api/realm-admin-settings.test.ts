import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { getRealm } from '../../src/read/realm.js';
import { realmRetentionDays } from '../../src/services/retention.js';

const realmRegister = { event_types: ['realm'], fetch_event_types: ['realm'] };

t.test('PATCH /realm: who may change what', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const moderator = await s.user(Role.MODERATOR, 'Moderator');
  const member = await s.user(Role.MEMBER, 'Member');

  for (const who of [member, moderator]) {
    const refused = await s.api('PATCH', '/realm', who, { name: 'Mine now' });
    t.equal(refused.status, 400);
    t.match(refused.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
  }
  // Owner-only settings, refused to an administrator as on the real server.
  for (const params of [
    { message_retention_days: 30 },
    { invite_required: false },
    { invite_to_realm_policy: 2 },
    { emails_restricted_to_domains: true },
    { disallow_disposable_email_addresses: false },
    { authentication_methods: { Email: true } },
    { create_multiuse_invite_group: 1 },
    { waiting_period_threshold: 3 },
    { name: 'Fine', message_retention_days: 'unlimited' },
  ]) {
    const refused = await s.api('PATCH', '/realm', admin, params);
    t.equal(refused.status, 400, JSON.stringify(params));
    t.match(refused.body, { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' });
  }
  const realm = (await s.api('POST', '/register', member, realmRegister)).body;
  t.not(realm.realm_name, 'Fine', 'a refused request changes nothing, not even its allowed parts');

  const changed = await s.api('PATCH', '/realm', admin, { name: 'Renamed', digest_weekday: 3, allow_edit_history: false });
  t.equal(changed.status, 200);
  t.same(changed.body, { result: 'success', msg: '', name: 'updated', digest_weekday: 3, allow_edit_history: false });
  const again = await s.api('PATCH', '/realm', admin, { name: 'Renamed', digest_weekday: 3 });
  t.same(again.body, { result: 'success', msg: '' }, 'unchanged values are not reported');
});

t.test('PATCH /realm: bad values get the real server\'s errors and change nothing', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
    [{ default_language: 'xx' }, "Invalid language 'xx'"],
    [{ video_chat_provider: 2 }, 'Invalid video_chat_provider 2'],
    [{ giphy_rating: 9 }, 'Invalid giphy_rating 9'],
    [{ create_public_stream_policy: 6 }, 'Invalid create_public_stream_policy'],
    [{ waiting_period_threshold: -1 }, "Bad value for 'waiting_period_threshold': -1"],
    [{ message_retention_days: 0 }, "Bad value for 'message_retention_days': 0"],
    [{ message_retention_days: 'sometimes' }, "Bad value for 'message_retention_days': sometimes"],
    [{ message_content_edit_limit_seconds: -5 }, "Bad value for 'message_content_edit_limit_seconds': -5"],
    [{ message_content_delete_limit_seconds: 'never' }, "Bad value for 'message_content_delete_limit_seconds': never"],
    [{ jitsi_server_url: 'not a url' }, 'jitsi_server_url is not an allowed_type'],
    [{ new_stream_announcements_stream_id: 99999 }, 'Invalid channel ID'],
    [{ can_access_all_users_group: 99999 }, 'Invalid user group'],
    [{ authentication_methods: { Email: false } }, 'At least one authentication method must be enabled.'],
    [{ authentication_methods: { GitHub: true } }, "Invalid authentication method: GitHub. Valid methods are: ['Email']"],
    [{ mandatory_topics: 'maybe' }, 'Argument "mandatory_topics" is not valid JSON.'],
    [{ name: 'Good', giphy_rating: 9 }, 'Invalid giphy_rating 9'],
  ];
  for (const [params, msg] of cases) {
    const r = await s.api('PATCH', '/realm', s.owner, params);
    t.equal(r.status, 400, JSON.stringify(params));
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(params));
  }
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const idOf = (name: string) => groups.find((g) => g.name === name)!.id;
  const owners = await s.api('PATCH', '/realm', s.owner, { create_multiuse_invite_group: idOf('role:owners') });
  t.match(owners.body, { code: 'BAD_REQUEST', msg: "'create_multiuse_invite_group' setting cannot be set to 'role:owners' group." });
  const admins = await s.api('PATCH', '/realm', s.owner, { can_access_all_users_group: idOf('role:administrators') });
  t.match(admins.body, { msg: "'can_access_all_users_group' setting cannot be set to 'role:administrators' group." });
  const state = (await s.api('POST', '/register', s.owner, realmRegister)).body;
  t.not(state.realm_name, 'Good');
});

t.test('PATCH /realm: each change is a realm event, folded to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'announce' }] });
  const announceId = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'announce' })).body.stream_id as number;
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const idOf = (name: string) => groups.find((g) => g.name === name)!.id;

  const withUsers = { event_types: ['realm', 'realm_user'], fetch_event_types: ['realm', 'realm_user'] };
  const simple = await verifyAction(t, s, member, () => s.api('PATCH', '/realm', admin, {
    name: 'Acme', description: 'We make **everything**', default_language: 'de', create_public_stream_policy: 2,
    invite_to_stream_policy: 4, wildcard_mention_policy: 6, video_chat_provider: 0, giphy_rating: 0, digest_weekday: 4,
    jitsi_server_url: 'https://jitsi.example.com', new_stream_announcements_stream_id: announceId,
    message_content_delete_limit_seconds: 'unlimited', move_messages_within_stream_limit_seconds: 3600,
    default_code_block_language: 'python', org_type: 20, enable_read_receipts: false, require_unique_names: true,
  }), { register: withUsers });
  // A time limit set to "unlimited" is recorded first, as on the real server.
  t.match(simple, [
    { type: 'realm', op: 'update', property: 'message_content_delete_limit_seconds', value: null },
    { type: 'realm', op: 'update', property: 'name', value: 'Acme' },
    { type: 'realm', op: 'update', property: 'description', value: 'We make **everything**' },
  ]);
  t.ok(simple.every((e) => e.op === 'update'), 'plain settings are realm/update events');
  t.equal(simple.length, 17, 'one event per changed setting');
  t.match(simple.find((e) => e.property === 'message_content_delete_limit_seconds'), { value: null });
  const state = (await s.api('POST', '/register', member, withUsers)).body;
  t.equal(state.realm_name, 'Acme');
  t.equal(state.jitsi_server_url, 'https://jitsi.example.com');
  t.equal(state.can_create_public_streams, false, "the member's permissions follow the new policy");

  const dict = await verifyAction(t, s, member, () => s.api('PATCH', '/realm', admin, {
    allow_message_editing: false, edit_topic_policy: 2, message_content_edit_limit_seconds: 'unlimited',
    can_access_all_users_group: idOf('role:members'),
  }), { register: realmRegister });
  t.same(dict.map((e) => [e.op, e.property, e.data]), [
    ['update_dict', 'default', { message_content_edit_limit_seconds: null }],
    ['update_dict', 'default', { allow_message_editing: false }],
    ['update_dict', 'default', { edit_topic_policy: 2 }],
    ['update_dict', 'default', { can_access_all_users_group: idOf('role:members') }],
  ]);

  const owned = await verifyAction(t, s, admin, () => s.api('PATCH', '/realm', s.owner, {
    invite_required: false, emails_restricted_to_domains: true, create_multiuse_invite_group: idOf('role:members'),
    message_retention_days: 30, jitsi_server_url: 'default', new_stream_announcements_stream_id: -1,
  }), { register: realmRegister });
  t.equal(owned.length, 6);
  const afterOwned = (await s.api('POST', '/register', admin, { fetch_event_types: ['realm'] })).body;
  t.equal(afterOwned.realm_message_retention_days, 30);
  t.equal(afterOwned.realm_new_stream_announcements_stream_id, -1);
  t.equal(afterOwned.realm_jitsi_server_url, null);
  t.equal(afterOwned.jitsi_server_url, afterOwned.server_jitsi_server_url);

  // No change, no event.
  t.same(await verifyAction(t, s, member, () => s.api('PATCH', '/realm', admin, { name: 'Acme', giphy_rating: 0 }), { register: realmRegister }), []);
});

t.test('message_retention_days drives the retention job, and every setting replays', async (t) => {
  const s = await startTestServer(t);
  t.equal(realmRetentionDays((await getRealm(s.platform.db, 1))!), -1, 'unlimited by default');
  const set = await s.api('PATCH', '/realm', s.owner, { message_retention_days: 14 });
  t.same(set.body, { result: 'success', msg: '', message_retention_days: 14 });
  t.equal(realmRetentionDays((await getRealm(s.platform.db, 1))!), 14);
  await s.api('PATCH', '/realm', s.owner, { message_retention_days: 'unlimited', name: 'Replayed', edit_topic_policy: 6 });
  t.equal(realmRetentionDays((await getRealm(s.platform.db, 1))!), -1, '"unlimited" is kept forever');

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical read tables after rebuild');
  const state = (await s.api('POST', '/register', s.owner, { fetch_event_types: ['realm'] })).body;
  t.match(state, { realm_name: 'Replayed', realm_message_retention_days: -1, realm_edit_topic_policy: 6 });
});

t.test('jitsi_server_url is JSON-encoded, as on the real server (test_realm.py test_jitsi_server_url)', async (t) => {
  const s = await startTestServer(t);
  for (const value of ['', 'invalidURL', 12, `https://jitsi.example.com/${'a'.repeat(180)}`, 'https://intranet']) {
    const r = await s.api('PATCH', '/realm', s.owner, { jitsi_server_url: JSON.stringify(value) });
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'jitsi_server_url is not an allowed_type' }, JSON.stringify(value));
  }
  const set = await s.api('PATCH', '/realm', s.owner, { jitsi_server_url: JSON.stringify('https://jitsi.example.com') });
  t.same(set.body, { result: 'success', msg: '', jitsi_server_url: 'updated' });
  let state = (await s.api('POST', '/register', s.owner, realmRegister)).body;
  t.equal(state.realm_jitsi_server_url, 'https://jitsi.example.com', 'stored without the JSON quotes');
  const reset = await s.api('PATCH', '/realm', s.owner, { jitsi_server_url: JSON.stringify('default') });
  t.same(reset.body, { result: 'success', msg: '', jitsi_server_url: null });
  state = (await s.api('POST', '/register', s.owner, realmRegister)).body;
  t.equal(state.realm_jitsi_server_url, null);
});

t.test('one request\'s events come in the order the real server records them', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('PATCH', '/realm', s.owner, { move_messages_between_streams_limit_seconds: 100, jitsi_server_url: JSON.stringify('https://a.example.com') });
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const members = groups.find((g) => g.name === 'role:members')!.id;
  const events = await verifyAction(t, s, member, () => s.api('PATCH', '/realm', s.owner, {
    org_type: 20,
    new_stream_announcements_stream_id: -1,
    create_multiuse_invite_group: members,
    message_content_delete_limit_seconds: 60,
    message_retention_days: 30,
    name: 'Ordered',
    move_messages_between_streams_limit_seconds: 'unlimited',
    jitsi_server_url: JSON.stringify('default'),
    digest_weekday: 2,
  }), { register: realmRegister });
  t.same(events.map((e) => e.property === 'default' ? Object.keys(e.data)[0] : e.property), [
    // Cleared limits and the Jitsi URL first; plain settings; retention, then set limits; groups; channels; org type.
    'move_messages_between_streams_limit_seconds', 'jitsi_server_url',
    'name', 'digest_weekday',
    'message_retention_days', 'message_content_delete_limit_seconds',
    'create_multiuse_invite_group',
    'new_stream_announcements_stream_id',
    'org_type',
  ]);
});

t.test('video call providers: only those this server offers, listed in /register', async (t) => {
  const s = await startTestServer(t);
  const state = (await s.api('POST', '/register', s.owner, realmRegister)).body;
  // The web app reads .disabled.id and .jitsi_meet.id from this object.
  t.same(state.realm_available_video_chat_providers, { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } });
  for (const id of [3, 4]) {
    t.same((await s.api('PATCH', '/realm', s.owner, { video_chat_provider: id })).body,
      { result: 'error', code: 'BAD_REQUEST', msg: `Invalid video_chat_provider ${id}` }, 'Zoom and BigBlueButton are not configured');
  }
});
