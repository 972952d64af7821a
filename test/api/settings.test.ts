import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, Role, basicAuth } from '../helpers/server.js';
import { DEFAULT_USER_SETTINGS } from '../../src/domain/settings/defaults.js';

/** One valid value per setting that differs from its default. */
const NEW_VALUES: Record<string, unknown> = {
  twenty_four_hour_time: true,
  dense_mode: false,
  web_mark_read_on_scroll_policy: 3,
  web_channel_default_view: 2,
  starred_message_counts: false,
  receives_typing_notifications: false,
  fluid_layout_width: true,
  high_contrast_mode: true,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  color_scheme: 2,
  translate_emoticons: true,
  display_emoji_reaction_users: false,
  default_language: 'de',
  web_home_view: 'recent_topics',
  web_escape_navigates_to_home_view: false,
  left_side_userlist: true,
  emojiset: 'vendor1-blob',
  demote_inactive_streams: 3,
  user_list_style: 3,
  web_animate_image_previews: 'on_hover',
  web_stream_unreads_count_display_policy: 1,
  web_navigate_to_sent_message: false,
  enter_sends: true,
  enable_drafts_synchronization: false,
  enable_stream_desktop_notifications: true,
  enable_stream_email_notifications: true,
  enable_stream_push_notifications: true,
  enable_stream_audible_notifications: true,
  notification_sound: 'ding',
  enable_desktop_notifications: false,
  enable_sounds: false,
  enable_followed_topic_desktop_notifications: false,
  enable_followed_topic_email_notifications: false,
  enable_followed_topic_push_notifications: false,
  enable_followed_topic_audible_notifications: false,
  enable_followed_topic_wildcard_mentions_notify: false,
  email_notifications_batching_period_seconds: 300,
  enable_offline_email_notifications: false,
  enable_offline_push_notifications: false,
  enable_online_push_notifications: false,
  enable_digest_emails: false,
  enable_marketing_emails: false,
  enable_login_emails: false,
  message_content_in_email_notifications: false,
  pm_content_in_desktop_notifications: false,
  wildcard_mentions_notify: false,
  desktop_icon_count_display: 3,
  realm_name_in_email_notifications_policy: 2,
  automatically_follow_topics_policy: 1,
  automatically_unmute_topics_in_muted_streams_policy: 1,
  automatically_follow_topics_where_mentioned: false,
  presence_enabled: false,
  send_private_typing_notifications: false,
  send_stream_typing_notifications: false,
  send_read_receipts: false,
  email_address_visibility: 4,
};

/** Invalid values and the message each gets. */
const INVALID: Array<[string, unknown, string]> = [
  ['twenty_four_hour_time', 'maybe', 'Argument "twenty_four_hour_time" is not valid JSON.'],
  ['web_mark_read_on_scroll_policy', 4, 'Invalid web_mark_read_on_scroll_policy'],
  ['web_channel_default_view', 3, 'Invalid web_channel_default_view'],
  ['color_scheme', 0, 'Invalid color_scheme'],
  ['color_scheme', 'dark', 'Argument "color_scheme" is not valid JSON.'],
  ['color_scheme', '"2"', 'color_scheme is not an integer'],
  ['web_font_size_px', -1, 'Invalid web_font_size_px'],
  ['web_line_height_percent', 40000, 'Invalid web_line_height_percent'],
  ['default_language', 'xx', 'Invalid default_language'],
  ['web_home_view', 'stream', 'Invalid web_home_view'],
  ['emojiset', 'google', 'Invalid emojiset'],
  ['demote_inactive_streams', 4, 'Invalid demote_inactive_streams'],
  ['user_list_style', 0, 'Invalid user_list_style'],
  ['web_animate_image_previews', 'sometimes', 'Invalid web_animate_image_previews'],
  ['web_stream_unreads_count_display_policy', 4, 'Invalid web_stream_unreads_count_display_policy'],
  ['notification_sound', 'trumpet', "Invalid notification sound 'trumpet'"],
  ['email_notifications_batching_period_seconds', 0, 'Invalid email batching period: 0 seconds'],
  ['email_notifications_batching_period_seconds', 604801, 'Invalid email batching period: 604801 seconds'],
  ['desktop_icon_count_display', 5, 'Invalid desktop_icon_count_display'],
  ['realm_name_in_email_notifications_policy', 4, 'Invalid realm_name_in_email_notifications_policy'],
  ['automatically_follow_topics_policy', 5, 'Invalid automatically_follow_topics_policy'],
  ['automatically_unmute_topics_in_muted_streams_policy', 0, 'Invalid automatically_unmute_topics_in_muted_streams_policy'],
  ['email_address_visibility', 6, 'Invalid email_address_visibility'],
  ['timezone', 'Mars/Olympus_Mons', 'timezone is not a recognized time zone'],
  ['timezone', 'europe/berlin', 'timezone is not a recognized time zone'],
  ['full_name', '   ', 'Name too short!'],
];

const userSettings = async (s: any, user: any) =>
  (await s.api('POST', '/register', user, { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } })).body.user_settings;

t.test('every personal setting is accepted and shows in /register', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  t.same(Object.keys(NEW_VALUES).sort(), Object.keys(DEFAULT_USER_SETTINGS).sort(), 'the test covers every setting');
  const before = await userSettings(s, alice);
  for (const [name, value] of Object.entries(NEW_VALUES)) t.not(before[name], value, `${name} starts elsewhere`);

  const res = await s.api('PATCH', '/settings', alice, { ...NEW_VALUES, timezone: 'America/New_York' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(res.body, { result: 'success', msg: '' });
  const after = await userSettings(s, alice);
  for (const [name, value] of Object.entries(NEW_VALUES)) t.same(after[name], value, name);
  t.equal(after.timezone, 'America/New_York');
  t.type(after.available_notification_sounds, Array);
  t.type(after.emojiset_choices, Array);

  // Values arrive as form text, JSON-decoded as the real server does.
  const encoded = await s.api('PATCH', '/settings', alice, { color_scheme: '3', left_side_userlist: 'false' });
  t.equal(encoded.status, 200, JSON.stringify(encoded.body));
  const again = await userSettings(s, alice);
  t.equal(again.color_scheme, 3);
  t.equal(again.left_side_userlist, false);
});

t.test('invalid values are rejected and change nothing, not even the valid ones', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const before = await userSettings(s, alice);
  const me = await s.api('GET', '/users/me', alice);
  for (const [name, value, msg] of INVALID) {
    const res = await s.api('PATCH', '/settings', alice, { twenty_four_hour_time: true, color_scheme: 2, full_name: 'Changed Name', [name]: value });
    t.equal(res.status, 400, `${name}=${JSON.stringify(value)} is a 400`);
    t.equal(res.body.code, 'BAD_REQUEST', name);
    t.equal(res.body.msg, msg, name);
  }
  t.same(await userSettings(s, alice), before, 'no setting changed');
  t.equal((await s.api('GET', '/users/me', alice)).body.full_name, me.body.full_name, 'the name did not change');
});

t.test('unknown parameters, aliases, names, time zones, bots', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');

  const unknown = await s.api('PATCH', '/settings', alice, { dense_mode: false, not_a_setting: 1 });
  t.equal(unknown.status, 200);
  t.same(unknown.body.ignored_parameters_unsupported, ['not_a_setting']);

  const display = await s.api('PATCH', '/settings/display', alice, { color_scheme: 3, emojiset: 'text' });
  t.equal(display.status, 200);
  const notifications = await s.api('PATCH', '/settings/notifications', alice, { enable_sounds: false });
  t.equal(notifications.status, 200);
  const now = await userSettings(s, alice);
  t.equal(now.color_scheme, 3);
  t.equal(now.emojiset, 'text');
  t.equal(now.enable_sounds, false);
  t.equal(now.dense_mode, false);

  const renamed = await s.api('PATCH', '/settings', alice, { full_name: '  Alice Liddell ' });
  t.equal(renamed.status, 200);
  t.equal((await s.api('GET', `/users/${alice.id}`, alice)).body.user.full_name, 'Alice Liddell');

  for (const tz of ['Europe/Berlin', 'UTC', 'US/Eastern', '']) {
    const res = await s.api('PATCH', '/settings', alice, { timezone: tz });
    t.equal(res.status, 200, `${tz} accepted`);
    t.equal((await s.api('GET', `/users/${alice.id}`, alice)).body.user.timezone, tz);
  }

  const bot = await s.user(Role.MEMBER, 'Botty', { bot_type: 1, bot_owner_id: alice.id });
  const botRes = await s.api('PATCH', '/settings', bot, { color_scheme: 2 });
  t.equal(botRes.status, 400);
  t.equal(botRes.body.msg, 'This endpoint does not accept bot requests.');

  const anon = await s.api('PATCH', '/settings', null, { color_scheme: 2 });
  t.equal(anon.status, 401);
});

t.test('password change', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  // Give Alice a password through the API first: she has none, so any old password is wrong.
  const noPassword = await s.api('PATCH', '/settings', alice, { old_password: 'x', new_password: 'first-secret' });
  t.equal(noPassword.body.msg, 'Wrong password!');
  await s.api('PATCH', `/users/${alice.id}`, s.owner, {});
  const hash = await import('../../src/services/secrets.js').then((m) => m.hashPassword('first-secret'));
  await s.platform.commands.run({ actor_id: alice.id, realm_id: 1, client: 'test', request_id: 'pw', time: new Date().toISOString() }, async () => {
    const row = await s.platform.db.selectFrom('users').select('version').where('id', '=', alice.id).executeTakeFirstOrThrow();
    return { appends: [{ streamId: `user-${alice.id}`, expectedVersion: row.version, events: [{ type: 'UserPasswordChanged', data: { user_id: alice.id, password_hash: hash } }] }], result: undefined };
  });

  const wrong = await s.api('PATCH', '/settings', alice, { old_password: 'not-it', new_password: 'second-secret', color_scheme: 2 });
  t.equal(wrong.status, 400);
  t.equal(wrong.body.msg, 'Wrong password!');
  const missingOld = await s.api('PATCH', '/settings', alice, { new_password: 'second-secret' });
  t.equal(missingOld.body.msg, 'Wrong password!');
  t.equal((await userSettings(s, alice)).color_scheme, 1, 'a wrong password changes nothing else either');

  const weak = await s.api('PATCH', '/settings', alice, { old_password: 'first-secret', new_password: 'abc' });
  t.equal(weak.body.msg, 'New password is too weak!');

  const ok = await s.api('PATCH', '/settings', alice, { old_password: 'first-secret', new_password: 'second-secret' });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  const login = await s.api('POST', '/fetch_api_key', null, { username: alice.email, password: 'second-secret' });
  t.equal(login.status, 200, 'the new password works');
  t.equal(login.body.api_key, alice.apiKey, 'the API key is unchanged');
  const oldLogin = await s.api('POST', '/fetch_api_key', null, { username: alice.email, password: 'first-secret' });
  t.equal(oldLogin.status, 401, 'the old password no longer works');
  t.equal((await s.api('GET', '/users/me', alice)).status, 200, 'the old API key keeps working');
});

t.test('email change goes through a confirmation link', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'settings-mail-'));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const mails = () => {
    try {
      return readdirSync(path.join(dataDir, 'emails')).sort().map((f) => readFileSync(path.join(dataDir, 'emails', f), 'utf8'));
    } catch {
      return [];
    }
  };

  const taken = await s.api('PATCH', '/settings', alice, { email: bob.email });
  t.equal(taken.status, 400);
  t.equal(taken.body.msg, 'Already has an account.');
  const invalid = await s.api('PATCH', '/settings', alice, { email: 'not an address' });
  t.equal(invalid.body.msg, 'Invalid address.');
  t.same(mails(), [], 'no mail for a refused request');

  const res = await s.api('PATCH', '/settings', alice, { email: 'alice.new@example.org' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal((await s.api('GET', '/users/me', alice)).body.delivery_email, alice.email, 'nothing changes before confirmation');
  const [mail] = mails();
  t.match(mail, /To: alice\.new@example\.org/);
  const link = /(https?:\/\/\S+\/accounts\/confirm_new_email\/(\S+))/.exec(mail!);
  t.ok(link, 'the mail holds the confirmation link');
  const url = new URL(link![1]!);

  const bogus = await s.fastify.inject({ method: 'GET', url: '/accounts/confirm_new_email/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  t.equal(bogus.statusCode, 404);

  const confirmed = await s.fastify.inject({ method: 'GET', url: url.pathname });
  t.equal(confirmed.statusCode, 200, confirmed.body);
  t.match(confirmed.body, /alice\.new@example\.org/);
  const me = await s.api('GET', '/users/me', { ...alice, auth: basicAuth('alice.new@example.org', alice.apiKey) });
  t.equal(me.status, 200, 'the new address authenticates');
  t.equal(me.body.delivery_email, 'alice.new@example.org');
  t.match(mails()[1], /To: alice1?\d*@example\.com/, 'the old address is told');

  const reused = await s.fastify.inject({ method: 'GET', url: url.pathname });
  t.equal(reused.statusCode, 404, 'a link works once');
});

t.test('organization defaults for new users', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');

  const denied = await s.api('PATCH', '/realm/user_settings_defaults', member, { color_scheme: 2 });
  t.equal(denied.status, 400);
  t.equal(denied.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal(denied.body.msg, 'Must be an organization administrator');

  const atomic = await s.api('PATCH', '/realm/user_settings_defaults', admin, { color_scheme: 2, emojiset: 'nope' });
  t.equal(atomic.status, 400);
  t.equal(atomic.body.msg, 'Invalid emojiset');
  const reg0 = await s.api('POST', '/register', admin, { fetch_event_types: ['realm_user_settings_defaults'] });
  t.equal(reg0.body.realm_user_settings_defaults.color_scheme, 1, 'an invalid value changes nothing');

  const changed = await s.api('PATCH', '/realm/user_settings_defaults', admin, {
    color_scheme: 2, enter_sends: true, email_address_visibility: 3, web_home_view: 'all_messages', timezone: 'UTC',
  });
  t.equal(changed.status, 200, JSON.stringify(changed.body));
  t.same(changed.body.ignored_parameters_unsupported, ['timezone'], 'time zones are personal');
  const reg = await s.api('POST', '/register', admin, { fetch_event_types: ['realm_user_settings_defaults'] });
  t.match(reg.body.realm_user_settings_defaults, { color_scheme: 2, enter_sends: true, email_address_visibility: 3, web_home_view: 'all_messages' });
  t.type(reg.body.realm_user_settings_defaults.emojiset_choices, Array);

  t.equal((await userSettings(s, member)).color_scheme, 1, 'an existing user keeps their settings');
  const newcomer = await s.user(Role.MEMBER, 'Newcomer');
  t.match(await userSettings(s, newcomer), { color_scheme: 2, enter_sends: true, email_address_visibility: 3, web_home_view: 'all_messages' });
  const viaApi = await s.api('POST', '/users', admin, { email: 'api-made@example.com', full_name: 'Api Made' });
  const apiUser = await s.platform.db.selectFrom('users').selectAll().where('id', '=', viaApi.body.user_id).executeTakeFirstOrThrow();
  t.match(apiUser.settings, { color_scheme: 2, enter_sends: true });
});

t.test('turning draft synchronization off deletes server drafts', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const created = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'keep me?' }] });
  t.equal(created.status, 200);
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 1);
  const queue = await s.api('POST', '/register', alice, { event_types: ['drafts'] });
  const off = await s.api('PATCH', '/settings', alice, { enable_drafts_synchronization: false });
  t.equal(off.status, 200);
  const events = await s.api('GET', '/events', alice, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id, dont_block: true });
  t.match(events.body.events, [{ type: 'drafts', op: 'remove', draft_id: created.body.ids[0] }], 'clients are told the server drafts are gone');
  const left = await s.platform.db.selectFrom('drafts').selectAll().where('user_id', '=', alice.id).execute();
  t.same(left, [], 'the drafts are gone from the server');
  const refused = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'new' }] });
  t.equal(refused.status, 400, 'no new server drafts while it is off');
  await s.api('PATCH', '/settings', alice, { enable_drafts_synchronization: true });
  const accepted = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'new' }] });
  t.equal(accepted.status, 200, 'accepted again once it is back on');
});
