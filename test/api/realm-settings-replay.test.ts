// PATCH /realm and POST /realm/deactivate by the rules of the real server's organization-settings
// tests (feature level 247): who may change what, each setting's checks and error texts in the
// order the real server applies them, and the realm update / update_dict events.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';

const patch = (s: TestServer, who: TestUser, params: Record<string, unknown>) => s.api('PATCH', '/realm', who, params);

async function realmQueue(s: TestServer, who: TestUser) {
  const registered = (await s.api('POST', '/register', who, { event_types: ['realm'] })).body;
  let last = registered.last_event_id as number;
  return async () => {
    const polled = await s.api('GET', '/events', who, { queue_id: registered.queue_id, last_event_id: last, dont_block: true });
    const events = (polled.body.events as Array<Record<string, unknown>>).filter((e) => e.type !== 'heartbeat');
    if (events.length > 0) last = events[events.length - 1]!.id as number;
    return events.map(({ id: _id, ...rest }) => rest);
  };
}

t.test('only administrators, and they are refused before any parameter is read', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const refused = await patch(s, member, { waiting_period_threshold: 'abc', name: 'x'.repeat(100) });
  t.match(refused.body, { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
});

t.test('lengths and fixed choices are checked as parameters, in the order the real server declares them', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
    [{ bot_creation_policy: 4 }, 'Invalid bot_creation_policy'],
    [{ create_public_stream_policy: 10 }, 'Invalid create_public_stream_policy'],
    [{ create_web_public_stream_policy: 1 }, 'Invalid create_web_public_stream_policy'],
    [{ invite_to_stream_policy: 10 }, 'Invalid invite_to_stream_policy'],
    [{ user_group_edit_policy: 5 }, 'Invalid user_group_edit_policy'],
    [{ private_message_policy: 3 }, 'Invalid private_message_policy'],
    [{ wildcard_mention_policy: 4 }, 'Invalid wildcard_mention_policy'],
    [{ add_custom_emoji_policy: 10 }, 'Invalid add_custom_emoji_policy'],
    [{ delete_own_message_policy: 10 }, 'Invalid delete_own_message_policy'],
    [{ edit_topic_policy: 10 }, 'Invalid edit_topic_policy'],
    [{ move_messages_between_streams_policy: 5 }, 'Invalid move_messages_between_streams_policy'],
    [{ digest_weekday: 7 }, 'Invalid digest_weekday'],
    [{ org_type: 1 }, 'Invalid org_type'],
    [{ video_chat_provider: 10 }, 'Invalid video_chat_provider 10'],
    [{ giphy_rating: 10 }, 'Invalid giphy_rating 10'],
    [{ default_language: 'invalid_lang' }, "Invalid language 'invalid_lang'"],
    [{ jitsi_server_url: '' }, 'jitsi_server_url is not an allowed_type'],
    [{ jitsi_server_url: 12 }, 'jitsi_server_url is not an allowed_type'],
    [{ jitsi_server_url: `https://jitsi.example.com/${'a'.repeat(180)}` }, 'jitsi_server_url is not an allowed_type'],
    [{ message_content_delete_limit_seconds: 0 }, "Bad value for 'message_content_delete_limit_seconds': 0"],
    [{ message_content_delete_limit_seconds: 'invalid' }, "Bad value for 'message_content_delete_limit_seconds': invalid"],
    [{ message_content_edit_limit_seconds: -10 }, "Bad value for 'message_content_edit_limit_seconds': -10"],
    [{ move_messages_within_stream_limit_seconds: 0 }, "Bad value for 'move_messages_within_stream_limit_seconds': 0"],
    [{ move_messages_between_streams_limit_seconds: 0 }, "Bad value for 'move_messages_between_streams_limit_seconds': 0"],
    [{ signup_announcements_stream_id: 1234 }, 'Invalid channel ID'],
    // An invalid value of an owners' setting is named to an administrator before the refusal.
    [{ waiting_period_threshold: -10 }, "Bad value for 'waiting_period_threshold': -10"],
    [{ invite_to_realm_policy: 5 }, 'Invalid invite_to_realm_policy'],
    // Parameter checks run in declaration order, whatever order the request gives.
    [{ giphy_rating: 10, name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ video_chat_provider: 10, bot_creation_policy: 4 }, 'Invalid bot_creation_policy'],
    // Then the language, the providers, ... and time limits after them.
    [{ message_content_edit_limit_seconds: 0, video_chat_provider: 10 }, 'Invalid video_chat_provider 10'],
    [{ giphy_rating: 10, default_language: 'xx' }, "Invalid language 'xx'"],
  ];
  for (const [params, msg] of cases) {
    const r = await patch(s, admin, params);
    t.equal(r.status, 400, JSON.stringify(params));
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(params));
  }
});

t.test('owners\' settings: refused to administrators, checked for owners', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  for (const params of [
    { waiting_period_threshold: 10 },
    { invite_required: false },
    { emails_restricted_to_domains: true },
    { disallow_disposable_email_addresses: false },
    { invite_to_realm_policy: 1 },
    { message_retention_days: 10 },
    // Retention is refused before it is parsed.
    { message_retention_days: 0 },
    { authentication_methods: { Email: true } },
    // Every owners' setting is refused before a time limit is parsed.
    { message_content_edit_limit_seconds: 0, invite_required: true },
  ]) {
    const r = await patch(s, admin, params);
    t.same(r.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' }, JSON.stringify(params));
  }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ waiting_period_threshold: 'abc' }, "Bad value for 'waiting_period_threshold': abc"],
    [{ message_retention_days: 0 }, "Bad value for 'message_retention_days': 0"],
    [{ message_retention_days: -10 }, "Bad value for 'message_retention_days': -10"],
    [{ message_retention_days: 'invalid' }, "Bad value for 'message_retention_days': invalid"],
    // -1 is how "unlimited" is stored, never a value to send; nor is "forever".
    [{ message_retention_days: -1 }, "Bad value for 'message_retention_days': -1"],
    [{ message_retention_days: 'forever' }, "Bad value for 'message_retention_days': forever"],
    [{ authentication_methods: { Email: true, GitHub: true } }, "Invalid authentication method: GitHub. Valid methods are: ['Email']"],
    [{ authentication_methods: { Email: false } }, 'At least one authentication method must be enabled.'],
  ];
  for (const [params, msg] of cases) {
    t.same((await patch(s, s.owner, params)).body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(params));
  }
  t.same((await patch(s, s.owner, { waiting_period_threshold: 10 })).body, { result: 'success', msg: '', waiting_period_threshold: 10 });
  t.same((await patch(s, s.owner, { message_retention_days: 10 })).body, { result: 'success', msg: '', message_retention_days: 10 });
  t.same((await patch(s, s.owner, { message_retention_days: 'unlimited' })).body, { result: 'success', msg: '', message_retention_days: -1 });
  const state = (await s.api('POST', '/register', admin, { fetch_event_types: ['realm'] })).body;
  t.match(state, { realm_waiting_period_threshold: 10, realm_message_retention_days: -1 });
});

t.test('group settings take system groups only, each within its own allowed set', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const made = await s.api('POST', '/user_groups/create', s.owner, { name: 'team', description: 'A team', members: [member.id] });
  t.equal(made.status, 200);
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ id: number; name: string }>;
  const idOf = (name: string) => groups.find((g) => g.name === name)!.id;
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ can_access_all_users_group: idOf('team') }, "'can_access_all_users_group' must be a system user group."],
    [{ create_multiuse_invite_group: idOf('team') }, "'create_multiuse_invite_group' must be a system user group."],
    [{ can_access_all_users_group: 99999 }, 'Invalid user group'],
    [{ can_access_all_users_group: idOf('role:internet') }, "'can_access_all_users_group' setting cannot be set to 'role:internet' group."],
    [{ can_access_all_users_group: idOf('role:moderators') }, "'can_access_all_users_group' setting cannot be set to 'role:moderators' group."],
    [{ create_multiuse_invite_group: idOf('role:everyone') }, "'create_multiuse_invite_group' setting cannot be set to 'role:everyone' group."],
    [{ create_multiuse_invite_group: idOf('role:internet') }, "'create_multiuse_invite_group' setting cannot be set to 'role:internet' group."],
  ];
  for (const [params, msg] of cases) {
    t.same((await patch(s, s.owner, params)).body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(params));
  }
  const next = await realmQueue(s, member);
  t.same((await patch(s, s.owner, { create_multiuse_invite_group: idOf('role:moderators') })).body,
    { result: 'success', msg: '', create_multiuse_invite_group: idOf('role:moderators') });
  t.same((await patch(s, s.owner, { can_access_all_users_group: idOf('role:everyone') })).body, { result: 'success', msg: '' }, 'already everyone: nothing changes');
  t.same(await next(), [{ type: 'realm', op: 'update_dict', property: 'default', data: { create_multiuse_invite_group: idOf('role:moderators') } }]);
});

t.test('what the answer and the events say for each kind of setting', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: member.id });
  const next = await realmQueue(s, member);
  const botNext = await realmQueue(s, bot);
  const ok = (data: Record<string, unknown> = {}) => ({ result: 'success', msg: '', ...data });

  t.same((await patch(s, admin, { description: 'zulip dev group' })).body, ok({ description: 'updated' }));
  t.same((await patch(s, admin, { default_code_block_language: 'javascript' })).body, ok({ default_code_block_language: 'updated' }));
  t.same((await patch(s, admin, { default_code_block_language: '' })).body, ok({ default_code_block_language: 'updated' }));
  t.same((await patch(s, admin, { jitsi_server_url: 'https://jitsi.example.com' })).body, ok({ jitsi_server_url: 'updated' }));
  t.same((await patch(s, admin, { jitsi_server_url: 'default' })).body, ok({ jitsi_server_url: null }));
  // Zoom (3) and BigBlueButton (4) exist only on a server configured for them; this one is not.
  t.same((await patch(s, admin, { video_chat_provider: 4 })).body, { result: 'error', msg: 'Invalid video_chat_provider 4', code: 'BAD_REQUEST' });
  t.same((await patch(s, admin, { video_chat_provider: 0, giphy_rating: 5 })).body, ok({ video_chat_provider: 0, giphy_rating: 5 }));
  t.same((await patch(s, admin, { message_content_delete_limit_seconds: 'unlimited' })).body, ok({ message_content_delete_limit_seconds: null }));
  t.same((await patch(s, admin, { allow_message_editing: false, message_content_edit_limit_seconds: 1000 })).body,
    ok({ allow_message_editing: false, message_content_edit_limit_seconds: 1000 }));
  // The organization type is recorded each time it is sent, as is disabling an announcement channel.
  t.same((await patch(s, admin, { org_type: 30 })).body, ok({ org_type: 30 }));
  t.same((await patch(s, admin, { org_type: 30 })).body, ok({ org_type: 30 }));
  t.same((await patch(s, admin, { zulip_update_announcements_stream_id: -1 })).body, ok({ zulip_update_announcements_stream_id: -1 }));

  const expected = [
    { type: 'realm', op: 'update', property: 'description', value: 'zulip dev group' },
    { type: 'realm', op: 'update', property: 'default_code_block_language', value: 'javascript' },
    { type: 'realm', op: 'update', property: 'default_code_block_language', value: '' },
    { type: 'realm', op: 'update', property: 'jitsi_server_url', value: 'https://jitsi.example.com' },
    { type: 'realm', op: 'update', property: 'jitsi_server_url', value: null },
    { type: 'realm', op: 'update', property: 'video_chat_provider', value: 0 },
    { type: 'realm', op: 'update', property: 'giphy_rating', value: 5 },
    { type: 'realm', op: 'update', property: 'message_content_delete_limit_seconds', value: null },
    { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: 1000 } },
    { type: 'realm', op: 'update', property: 'org_type', value: 30 },
    { type: 'realm', op: 'update', property: 'org_type', value: 30 },
    { type: 'realm', op: 'update', property: 'zulip_update_announcements_stream_id', value: -1 },
  ];
  t.same(await next(), expected);
  t.same(await botNext(), expected, 'bots are active users of the organization and hear it too');
});

t.test('POST /realm/deactivate is for owners', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  t.same((await s.api('POST', '/realm/deactivate', admin, {})).body,
    { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' });
  t.equal((await s.api('GET', '/users/me', admin)).status, 200, 'still active');
  t.same((await s.api('POST', '/realm/deactivate', s.owner, {})).body, { result: 'success', msg: '' });
  const after = await s.api('GET', '/users/me', admin);
  t.equal(after.status, 401);
  t.match(after.body, { result: 'error', code: 'REALM_DEACTIVATED' });
});
