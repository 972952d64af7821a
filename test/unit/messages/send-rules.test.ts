import t from 'tap';
import { automaticVisibilityPolicy } from '../../../src/domain/messages/automatic-visibility.js';
import { checkSendTopic, extractChannelIndicator, extractDirectRecipients } from '../../../src/domain/messages/send-addressing.js';
import { checkDirectMessagePolicy, isProvisional, wildcardPolicyAllows, type SendingUser } from '../../../src/domain/messages/send-permissions.js';
import { Role } from '../../../src/domain/roles.js';

// Settings: 1 participation, 2 send, 3 initiation, 4 never. Policies: 0 inherit, 1 muted, 2 unmuted, 3 followed.
t.test('automatic follow and unmute on send', async (t) => {
  const topic = (policy: number, channelMuted: boolean, startsTopic: boolean) => ({ policy, channelMuted, startsTopic });
  t.equal(automaticVisibilityPolicy({ follow: 3, unmute: 4 }, topic(0, false, true)), 3, 'starting a topic follows it');
  t.equal(automaticVisibilityPolicy({ follow: 3, unmute: 4 }, topic(0, false, false)), null, 'joining one does not');
  t.equal(automaticVisibilityPolicy({ follow: 1, unmute: 4 }, topic(0, false, false)), 3, 'participating follows');
  t.equal(automaticVisibilityPolicy({ follow: 2, unmute: 2 }, topic(1, true, false)), 3, 'following wins over unmuting');
  t.equal(automaticVisibilityPolicy({ follow: 4, unmute: 2 }, topic(0, true, false)), 2, 'unmutes in a muted channel');
  t.equal(automaticVisibilityPolicy({ follow: 4, unmute: 2 }, topic(0, false, false)), null, 'only in a muted channel');
  t.equal(automaticVisibilityPolicy({ follow: 4, unmute: 2 }, topic(2, true, false)), null, 'already unmuted');
  t.equal(automaticVisibilityPolicy({ follow: 4, unmute: 3 }, topic(0, true, true)), 2, 'unmutes a topic it starts');
  t.equal(automaticVisibilityPolicy({ follow: 3, unmute: 4 }, topic(1, false, true)), null, 'a topic with a policy is not being started');
  t.equal(automaticVisibilityPolicy({ follow: 2, unmute: 4 }, topic(3, false, false)), null, 'already followed');
});

t.test('addressing', async (t) => {
  t.equal(extractChannelIndicator('commas,are,fine'), 'commas,are,fine');
  t.equal(extractChannelIndicator('"Who hasn\'t done this?"'), "Who hasn't done this?");
  t.equal(extractChannelIndicator('999'), 999);
  t.equal(extractChannelIndicator('["social"]'), 'social');
  t.equal(extractChannelIndicator('[123]'), 123);
  t.throws(() => extractChannelIndicator('{}'), { message: 'Invalid data type for channel' });
  t.throws(() => extractChannelIndicator('[]'), { message: 'Expected exactly one channel' });
  t.same(extractDirectRecipients('alice@zulip.com    '), ['alice@zulip.com']);
  t.same(extractDirectRecipients('"bob@zulip.com,alice@zulip.com"'), ['bob@zulip.com', 'alice@zulip.com']);
  t.same(extractDirectRecipients('[3, 3, 12]'), [3, 12]);
  t.same(extractDirectRecipients('[]'), []);
  t.throws(() => extractDirectRecipients('[3, "a@b.c"]'), { message: 'Recipient lists may contain emails or user IDs, but not both.' });
  t.equal(checkSendTopic('  padded  ', 60), 'padded');
  t.equal(checkSendTopic('émoji 🎉'.repeat(10), 60), [...'émoji 🎉'.repeat(10)].slice(0, 57).join('') + '...', 'cut by code points');
  t.throws(() => checkSendTopic('a\u0085b', 60), { message: 'Invalid character in topic, at position 2!' });
  t.throws(() => checkSendTopic('a\ud800b', 60), { message: 'Invalid character in topic, at position 2!' });
  t.throws(() => checkSendTopic('a\u{1fffe}', 60), { message: 'Invalid character in topic, at position 2!' });
});

t.test('permissions', async (t) => {
  const user = (role: number, extra: Partial<SendingUser> = {}): SendingUser => ({ user_id: 1, role, is_bot: false, is_system_bot: false, provisional: false, ...extra });
  const now = new Date('2024-03-11T00:00:00Z');
  t.equal(isProvisional(Role.MEMBER, '2024-03-02T00:00:00Z', 10, now), true, '9 days < 10');
  t.equal(isProvisional(Role.MEMBER, '2024-03-01T00:00:00Z', 10, now), false, '10 days');
  t.equal(isProvisional(Role.MODERATOR, '2024-03-10T00:00:00Z', 10, now), false, 'moderators are never new');
  t.equal(wildcardPolicyAllows(user(Role.ADMINISTRATOR, { provisional: true }), 3), true);
  t.equal(wildcardPolicyAllows(user(Role.MEMBER, { provisional: true }), 3), false);
  t.equal(wildcardPolicyAllows(user(Role.OWNER), 6), false, 'nobody');
  t.equal(wildcardPolicyAllows(user(Role.MODERATOR), 5), false);
  t.doesNotThrow(() => checkDirectMessagePolicy(user(Role.MEMBER), [{ user_id: 2, is_bot: false }], 1));
  t.throws(() => checkDirectMessagePolicy(user(Role.MEMBER), [{ user_id: 2, is_bot: false }], 2), { message: 'Direct messages are disabled in this organization.' });
  t.doesNotThrow(() => checkDirectMessagePolicy(user(Role.MEMBER), [{ user_id: 1, is_bot: false }], 2), 'oneself');
});
