// PATCH /settings and PATCH /realm/user_settings_defaults by the rules of the real server's
// personal-settings tests (feature level 247): each setting's checks and error texts, the
// organization's name and email restrictions, password changes, and the events.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';

const settings = (s: TestServer, who: TestUser, params: Record<string, unknown>) => s.api('PATCH', '/settings', who, params);
const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const ok = { result: 'success', msg: '' };

t.test('each personal setting is checked, with the real server\'s texts', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: member.id });
  t.same((await settings(s, bot, { dense_mode: false })).body, error('This endpoint does not accept bot requests.'));
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ default_language: 'invalid_default_language' }, 'Invalid default_language'],
    [{ emojiset: 'invalid_emojiset' }, 'Invalid emojiset'],
    [{ timezone: 'invalid_timezone' }, 'timezone is not a recognized time zone'],
    [{ demote_inactive_streams: 100 }, 'Invalid demote_inactive_streams'],
    [{ color_scheme: 100 }, 'Invalid color_scheme'],
    [{ web_home_view: 'invalid_view' }, 'Invalid web_home_view'],
    [{ user_list_style: 100 }, 'Invalid user_list_style'],
    [{ notification_sound: 'invalid' }, "Invalid notification sound 'invalid'"],
    [{ email_notifications_batching_period_seconds: -1 }, 'Invalid email batching period: -1 seconds'],
    [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    [{ email_notifications_batching_period_seconds: 7 * 24 * 60 * 60 + 10 }, 'Invalid email batching period: 604810 seconds'],
    [{ enter_sends: 'sometimes' }, 'Argument "enter_sends" is not valid JSON.'],
  ];
  for (const [params, msg] of cases) t.same((await settings(s, member, params)).body, error(msg), JSON.stringify(params));
  // Changing nothing still succeeds; what the server does not know is listed.
  t.same((await settings(s, member, { dense_mode: true, emoji_set: 'twitter' })).body, { ...ok, ignored_parameters_unsupported: ['emoji_set'] });
  t.same((await settings(s, member, { notification_sound: 'none', email_notifications_batching_period_seconds: 604800 })).body, ok);
});

t.test('a password changes only with the current one', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  t.same((await settings(s, member, { old_password: 'bad_password', new_password: 'ignored-but-long' })).body, error('Wrong password!'));
  t.same((await settings(s, member, { new_password: 'ignored-but-long' })).body, error('Wrong password!'), 'no current password is a wrong one');
  t.same((await settings(s, member, { old_password: 'ignored' })).body, ok, 'an old password alone changes nothing');
});

t.test('the organization\'s name and email restrictions', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  t.same((await settings(s, member, { email: 'not an address' })).body, error('Invalid address.'));
  t.same((await settings(s, member, { email: other.email })).body, error('Already has an account.'));
  t.same((await settings(s, member, { email: `  ${member.email}  ` })).body, ok, 'the current address, spaces aside, changes nothing');

  await s.api('PATCH', '/realm', s.owner, { name_changes_disabled: true, email_changes_disabled: true });
  // A member's new name is dropped without an error, and is not even checked.
  t.same((await settings(s, member, { full_name: 'Sir Member' })).body, ok);
  t.same((await settings(s, member, { full_name: 'x'.repeat(1000) })).body, ok);
  t.equal((await s.api('GET', '/users/me', member)).body.full_name, 'Member');
  t.same((await settings(s, admin, { full_name: 'New Admin' })).body, ok, 'administrators may still rename themselves');
  t.equal((await s.api('GET', '/users/me', admin)).body.full_name, 'New Admin');
  t.same((await settings(s, member, { email: 'member-new@example.com' })).body, error('Email address changes are disabled in this organization.'));
  t.same((await settings(s, admin, { email: 'admin-new@example.com' })).body, ok, 'administrators may still change their address');

  await s.api('POST', '/realm/domains', s.owner, { domain: 'example.org', allow_subdomains: false });
  await s.api('PATCH', '/realm', s.owner, { emails_restricted_to_domains: true });
  t.same((await settings(s, admin, { email: 'admin@elsewhere.example' })).body, error('Outside your domain.'));
  t.same((await settings(s, admin, { email: 'admin+tag@example.org' })).body, error('Email addresses containing + are not allowed.'));
  t.same((await settings(s, admin, { email: 'admin@example.org' })).body, ok);
});

t.test('organization defaults for new users: administrators, and not every personal setting', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const defaults = (who: TestUser, params: Record<string, unknown>) => s.api('PATCH', '/realm/user_settings_defaults', who, params);
  t.same((await defaults(member, { notification_sound: 'invalid' })).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
    'refused before the parameters are read');
  t.same((await defaults(admin, { notification_sound: 'invalid' })).body, error("Invalid notification sound 'invalid'"));
  t.same((await defaults(admin, { email_notifications_batching_period_seconds: -1 })).body, error('Invalid email batching period: -1 seconds'));
  t.same((await defaults(admin, { starred_message_counts: false, emoji_set: 'twitter' })).body, { ...ok, ignored_parameters_unsupported: ['emoji_set'] });
  t.same((await defaults(admin, { default_language: 'de', enable_login_emails: false, enable_marketing_emails: false, timezone: 'UTC' })).body,
    { ...ok, ignored_parameters_unsupported: ['default_language', 'enable_login_emails', 'enable_marketing_emails', 'timezone'] });
  const state = (await s.api('POST', '/register', admin, { fetch_event_types: ['realm_user_settings_defaults'] })).body;
  t.match(state.realm_user_settings_defaults, { starred_message_counts: false, enable_login_emails: true, default_language: 'en' });
});

t.test('a setting change reaches the user\'s clients, in the new form and the legacy one', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  const register = async (who: TestUser, params: Record<string, unknown>) => {
    const r = (await s.api('POST', '/register', who, params)).body;
    return async () => {
      const polled = await s.api('GET', '/events', who, { queue_id: r.queue_id, last_event_id: r.last_event_id, dont_block: true });
      return (polled.body.events as Array<Record<string, unknown>>).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...rest }) => rest);
    };
  };
  const legacy = await register(member, { event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'] });
  const modern = await register(member, { event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'], client_capabilities: { user_settings_object: true } });
  const others = await register(other, { event_types: ['user_settings', 'update_display_settings', 'realm_user'] });
  t.same((await settings(s, member, { default_language: 'de', enable_sounds: false, timezone: 'US/Mountain' })).body, ok);
  const newForm = [
    { type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'German' },
    { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
    { type: 'user_settings', op: 'update', property: 'timezone', value: 'US/Mountain' },
  ];
  t.same((await modern()).filter((e) => e.type === 'user_settings'), newForm);
  t.same(await legacy(), [
    newForm[0],
    { type: 'update_display_settings', user: member.email, setting_name: 'default_language', setting: 'de', language_name: 'German' },
    newForm[1],
    { type: 'update_global_notifications', user: member.email, notification_name: 'enable_sounds', setting: false },
    { type: 'realm_user', op: 'update', person: { user_id: member.id, email: member.email, timezone: 'US/Mountain' } },
    newForm[2],
    { type: 'update_display_settings', user: member.email, setting_name: 'timezone', setting: 'US/Mountain' },
  ].filter((e) => e.type !== 'realm_user'));
  t.same(await others(), [{ type: 'realm_user', op: 'update', person: { user_id: member.id, email: member.email, timezone: 'US/Mountain' } }],
    'others hear only of the time zone');
});
