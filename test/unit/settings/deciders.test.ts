import t, { type Test } from 'tap';
import { ApiError } from '../../../src/domain/errors.js';
import { DEFAULT_USER_SETTINGS } from '../../../src/domain/settings/defaults.js';
import { decideRealmDefaults, decideSettings, isValidTimezone, validateSettingValue } from '../../../src/domain/settings/decider.js';
import { decideAlertWords } from '../../../src/domain/alert-words/decider.js';
import { decideTyping, type TypingSender } from '../../../src/domain/typing/decider.js';

const rejects = (t: Test, fn: () => unknown, msg: string) => {
  try {
    fn();
    t.fail(`expected "${msg}"`);
  } catch (error) {
    t.ok(error instanceof ApiError, 'a catalog error');
    t.equal((error as ApiError).message, msg);
  }
};

const alice = { user_id: 7, is_bot: false, full_name: 'Alice', timezone: '', settings: { ...DEFAULT_USER_SETTINGS } as Record<string, unknown> };

t.test('settings decider', async (t) => {
  t.same(decideSettings({ type: 'ChangeOwnSettings', settings: { color_scheme: 1, dense_mode: true } }, alice), [], 'unchanged values give no event');
  t.same(
    decideSettings({ type: 'ChangeOwnSettings', settings: { enter_sends: true, color_scheme: 2 }, full_name: ' Alice B ', timezone: 'Europe/Oslo', new_password_hash: 'h' }, alice),
    [
      { type: 'UserPasswordChanged', data: { user_id: 7, password_hash: 'h' } },
      { type: 'UserRenamed', data: { user_id: 7, full_name: 'Alice B' } },
      { type: 'UserSettingsChanged', data: { user_id: 7, changes: { color_scheme: 2, enter_sends: true } } },
      { type: 'UserTimezoneChanged', data: { user_id: 7, timezone: 'Europe/Oslo' } },
    ],
  );
  rejects(t, () => decideSettings({ type: 'ChangeOwnSettings', settings: { color_scheme: 2, emojiset: 'google' } }, alice), 'Invalid emojiset');
  rejects(t, () => decideSettings({ type: 'ChangeOwnSettings', settings: {} }, { ...alice, is_bot: true }), 'This endpoint does not accept bot requests.');
  rejects(t, () => decideSettings({ type: 'ChangeOwnSettings', settings: {}, timezone: 'Nowhere/Land' }, alice), 'timezone is not a recognized time zone');
  rejects(t, () => validateSettingValue('default_language', 'klingon'), 'Invalid default_language');
  rejects(t, () => validateSettingValue('notification_sound', 'x'), "Invalid notification sound 'x'");
  rejects(t, () => validateSettingValue('email_notifications_batching_period_seconds', -5), 'Invalid email batching period: -5 seconds');
  rejects(t, () => validateSettingValue('enter_sends', 1), 'enter_sends is not a boolean');
  validateSettingValue('notification_sound', 'none');
  validateSettingValue('email_notifications_batching_period_seconds', 604800);
  t.ok(isValidTimezone('America/Argentina/Buenos_Aires'));
  t.ok(isValidTimezone('UTC'));
  t.notOk(isValidTimezone('+01:00'));
  t.notOk(isValidTimezone('asia/tokyo'));
});

t.test('organization defaults decider', async (t) => {
  const state = { realm_id: 1, defaults: { ...DEFAULT_USER_SETTINGS } as Record<string, unknown> };
  rejects(t, () => decideRealmDefaults({ actor_is_admin: false, settings: { color_scheme: 2 } }, state), 'Must be an organization administrator');
  t.same(decideRealmDefaults({ actor_is_admin: true, settings: { color_scheme: 2, dense_mode: true } }, state), [
    { type: 'RealmUserSettingsDefaultsChanged', data: { realm_id: 1, changes: { color_scheme: 2 } } },
  ]);
  t.same(decideRealmDefaults({ actor_is_admin: true, settings: { color_scheme: 1 } }, state), []);
});

t.test('alert words decider', async (t) => {
  t.same(decideAlertWords({ type: 'AddAlertWords', user_id: 3, words: ['B', 'a', 'b ', ' '] }, { alert_words: ['c'] }), [
    { type: 'AlertWordsAdded', data: { user_id: 3, words: ['b', 'a'], alert_words: ['c', 'b', 'a'] } },
  ], 'kept as typed after the list, first place and last spelling of a repeated word, blanks dropped');
  t.same(decideAlertWords({ type: 'AddAlertWords', user_id: 3, words: ['C'] }, { alert_words: ['c'] }), [
    { type: 'AlertWordsAdded', data: { user_id: 3, words: [], alert_words: ['c'] } },
  ], 'a request that adds nothing is recorded all the same');
  t.same(decideAlertWords({ type: 'RemoveAlertWords', user_id: 3, words: ['C', 'zz'] }, { alert_words: ['a', 'c'] }), [
    { type: 'AlertWordsRemoved', data: { user_id: 3, words: ['c'], alert_words: ['a'] } },
  ]);
  rejects(t, () => decideAlertWords({ type: 'AddAlertWords', user_id: 3, words: ['x'.repeat(101)] }, { alert_words: [] }), 'alert_words[0] is too long (limit: 100 characters)');
});

t.test('typing decider', async (t) => {
  const sender: TypingSender = { user_id: 1, realm_id: 1, role: 400, send_private_typing_notifications: true, send_stream_typing_notifications: true };
  t.same(decideTyping({ type: 'SendTyping', sender, op: 'start', message_type: 'direct', to: [2, 2], known_user_ids: new Set([1, 2]) }), [
    { type: 'TypingStarted', data: { sender_id: 1, realm_id: 1, message_type: 'direct', recipient_ids: [2, 1], stream_id: null, topic: null } },
  ]);
  rejects(t, () => decideTyping({ type: 'SendTyping', sender, op: 'stop', message_type: 'direct', to: [3], known_user_ids: new Set([1]) }), 'Invalid user ID 3');
  const channel = { id: 5, name: 'c', invite_only: false, stream_post_policy: 4, readable: true, subscribed: true };
  rejects(t, () => decideTyping({ type: 'SendTyping', sender, op: 'start', message_type: 'stream', stream_id: 5, topic: 't', channel }),
    'Only organization administrators and moderators can send to this channel.');
  t.same(decideTyping({ type: 'SendTyping', sender: { ...sender, role: 300 }, op: 'stop', message_type: 'stream', stream_id: 5, topic: 't', channel }), [
    { type: 'TypingStopped', data: { sender_id: 1, realm_id: 1, message_type: 'stream', recipient_ids: [], stream_id: 5, topic: 't' } },
  ]);
  rejects(t, () => decideTyping({ type: 'SendTyping', sender: { ...sender, role: 600 }, op: 'start', message_type: 'stream', stream_id: 5, topic: 't', channel: { ...channel, stream_post_policy: 1, subscribed: false } }),
    "Not authorized to send to channel 'c'");
});
