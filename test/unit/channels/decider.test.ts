// The channel rules as pure functions: given a channel's state and a command, the events (or the error).
import t from 'tap';
import {
  checkRemoveSubscribersGroup,
  checkStreamName,
  decideArchiveStream,
  decideCreateStream,
  decideSubscriptionProperty,
  decideUpdateStream,
  hasPolicy,
  parseRetentionDays,
  pickColor,
  STREAM_ASSIGNMENT_COLORS,
  type ChannelActor,
  type ChannelRealmSettings,
  type CreateStreamCommand,
  type StreamState,
  type UpdateStreamCommand,
} from '../../../src/domain/channels/decider.js';
import { Role } from '../../../src/domain/roles.js';

const actor = (role: number, full = true): ChannelActor => ({ user_id: 7, role, is_full_member: full });
const realm: ChannelRealmSettings = {
  create_public_stream_policy: 1,
  create_private_stream_policy: 1,
  create_web_public_stream_policy: 7,
  invite_to_stream_policy: 1,
  web_public_streams_enabled: true,
};
const stream: StreamState = {
  stream_id: 5,
  name: 'general',
  description: '',
  rendered_description: '',
  invite_only: false,
  is_web_public: false,
  history_public_to_subscribers: true,
  stream_post_policy: 1,
  message_retention_days: null,
  can_remove_subscribers_group: 2,
  is_default: false,
  deactivated: false,
};
const update = (changes: UpdateStreamCommand['changes'], over: Partial<UpdateStreamCommand> = {}): UpdateStreamCommand => ({
  type: 'UpdateStream',
  actor: actor(Role.ADMINISTRATOR),
  actor_subscribed: true,
  realm,
  new_name_taken: false,
  changes,
  ...over,
});
const createCmd = (over: Partial<CreateStreamCommand> = {}): CreateStreamCommand => ({
  type: 'CreateStream',
  actor: actor(Role.MEMBER),
  realm,
  stream_id: 9,
  realm_id: 1,
  now: 1700000000,
  name: 'new',
  description: '',
  rendered_description: '',
  invite_only: false,
  is_web_public: false,
  history_public_to_subscribers: undefined,
  stream_post_policy: 1,
  message_retention_days: undefined,
  can_remove_subscribers_group: 2,
  is_default: false,
  ...over,
});

t.test('permission levels', async (t) => {
  t.ok(hasPolicy(1, actor(Role.MEMBER)));
  t.notOk(hasPolicy(1, actor(Role.GUEST)), 'guests never pass');
  t.notOk(hasPolicy(2, actor(Role.MODERATOR)));
  t.ok(hasPolicy(2, actor(Role.ADMINISTRATOR)));
  t.notOk(hasPolicy(3, actor(Role.MEMBER, false)), 'a new member is not a full member');
  t.ok(hasPolicy(3, actor(Role.MODERATOR, false)));
  t.ok(hasPolicy(4, actor(Role.MODERATOR)));
  t.notOk(hasPolicy(4, actor(Role.MEMBER)));
  t.notOk(hasPolicy(6, actor(Role.OWNER)), 'nobody');
  t.ok(hasPolicy(7, actor(Role.OWNER)));
  t.notOk(hasPolicy(7, actor(Role.ADMINISTRATOR)));
});

t.test('names, retention and groups', async (t) => {
  t.equal(checkStreamName('  padded  '), 'padded');
  t.throws(() => checkStreamName(''), { message: "Channel name can't be empty." });
  t.throws(() => checkStreamName('a'.repeat(61)), { message: 'Channel name too long (limit: 60 characters).' });
  t.throws(() => checkStreamName('a\tb'), { message: 'Invalid character in channel name, at position 2.' });
  t.equal(parseRetentionDays('unlimited'), -1);
  t.equal(parseRetentionDays('realm_default'), null);
  t.equal(parseRetentionDays(30), 30);
  t.equal(parseRetentionDays('12'), 12);
  t.throws(() => parseRetentionDays(-5), { message: "Bad value for 'message_retention_days': -5" });
  t.throws(() => parseRetentionDays('soon'));
  t.equal(checkRemoveSubscribersGroup({ id: 3, name: 'role:members', is_system_group: true }), 3);
  t.throws(() => checkRemoveSubscribersGroup({ id: 3, name: 'role:owners', is_system_group: true }));
  t.throws(() => checkRemoveSubscribersGroup({ id: 3, name: 'role:internet', is_system_group: true }));
  t.throws(() => checkRemoveSubscribersGroup({ id: 3, name: 'team', is_system_group: false }));
  t.throws(() => checkRemoveSubscribersGroup(undefined), { message: 'Invalid user group' });
});

t.test('creating a channel', async (t) => {
  const created = decideCreateStream(createCmd());
  t.match(created, { type: 'StreamCreated', data: { stream_id: 9, creator_id: 7, date_created: 1700000000, history_public_to_subscribers: true, message_retention_days: null } });
  t.equal(decideCreateStream(createCmd({ invite_only: true })).data.history_public_to_subscribers, false);
  t.equal(decideCreateStream(createCmd({ invite_only: true, history_public_to_subscribers: true })).data.history_public_to_subscribers, true);
  t.equal(decideCreateStream(createCmd({ history_public_to_subscribers: false })).data.history_public_to_subscribers, true, 'public channels share history');
  t.throws(() => decideCreateStream(createCmd({ actor: actor(Role.GUEST) })), { message: 'Insufficient permission' });
  t.throws(() => decideCreateStream(createCmd({ realm: { ...realm, create_private_stream_policy: 2 }, invite_only: true })), { message: 'Insufficient permission' });
  t.throws(() => decideCreateStream(createCmd({ is_web_public: true })), { message: 'Insufficient permission' });
  t.throws(() => decideCreateStream(createCmd({ is_web_public: true, actor: actor(Role.OWNER), realm: { ...realm, web_public_streams_enabled: false } })), {
    message: 'Web-public channels are not enabled.',
  });
  t.equal(decideCreateStream(createCmd({ is_web_public: true, actor: actor(Role.OWNER) })).data.is_web_public, true);
  t.throws(() => decideCreateStream(createCmd({ message_retention_days: 3, actor: actor(Role.ADMINISTRATOR) })), { message: 'Must be an organization owner' });
  t.throws(() => decideCreateStream(createCmd({ is_default: true })), { message: 'Insufficient permission' });
  t.equal(decideCreateStream(createCmd({ message_retention_days: null })).data.message_retention_days, null, 'realm_default needs no owner');
  t.throws(() => decideCreateStream(createCmd({ is_default: true, invite_only: true, actor: actor(Role.ADMINISTRATOR) })), { message: 'A default channel cannot be private.' });
});

t.test('updating a channel', async (t) => {
  t.same(decideUpdateStream(update({ stream_post_policy: 1 }), stream), [], 'no change, no event');
  t.match(decideUpdateStream(update({ new_name: 'Renamed' }), stream), [{ type: 'StreamPropertyChanged', data: { property: 'name', value: 'Renamed', old_value: 'general' } }]);
  t.throws(() => decideUpdateStream(update({ new_name: 'general' }), stream), { message: 'Channel already has that name.' });
  t.throws(() => decideUpdateStream(update({ new_name: 'other' }, { new_name_taken: true }), stream), { message: 'Channel name already in use.' });
  t.match(decideUpdateStream(update({ description: 'd', rendered_description: '<p>d</p>' }), stream), [
    { data: { property: 'description', value: 'd', extra: { rendered_description: '<p>d</p>' } } },
  ]);
  t.match(decideUpdateStream(update({ is_announcement_only: true }), stream), [{ data: { property: 'stream_post_policy', value: 2 } }]);

  // Privacy, with the access change recorded on the first event.
  const priv = decideUpdateStream(update({ is_private: true }), stream);
  t.match(priv, [
    { data: { property: 'invite_only', value: true, extra: { history_public_to_subscribers: false, is_web_public: false }, access: { before: { invite_only: false }, after: { invite_only: true } } } },
    { data: { property: 'history_public_to_subscribers', value: false } },
  ]);
  t.throws(() => decideUpdateStream(update({ history_public_to_subscribers: false }), stream), { message: 'Invalid parameters' });
  t.throws(() => decideUpdateStream(update({ is_web_public: true, is_private: true }), stream), { message: 'Invalid parameters' });
  t.throws(() => decideUpdateStream(update({ is_web_public: true }), stream), { message: 'Insufficient permission' });
  t.match(decideUpdateStream(update({ is_web_public: true }, { actor: actor(Role.OWNER) }), stream), [{ data: { property: 'is_web_public', value: true } }]);
  const privateStream = { ...stream, invite_only: true, history_public_to_subscribers: false };
  t.throws(() => decideUpdateStream(update({ is_private: false }, { actor_subscribed: false }), privateStream), { message: 'Invalid channel ID' });
  t.match(decideUpdateStream(update({ description: 'x' }, { actor_subscribed: false }), privateStream), [{ data: { property: 'description' } }]);

  // Who may edit.
  t.throws(() => decideUpdateStream(update({ description: 'x' }, { actor: actor(Role.MODERATOR) }), stream), { message: 'Must be an organization administrator' });
  t.throws(() => decideUpdateStream(update({ description: 'x' }, { actor: actor(Role.MEMBER), actor_subscribed: false }), privateStream), { message: 'Invalid channel ID' });
  t.throws(() => decideUpdateStream(update({ message_retention_days: 5 }), stream), { message: 'Must be an organization owner' });
  t.match(decideUpdateStream(update({ message_retention_days: 5 }, { actor: actor(Role.OWNER) }), stream), [{ data: { property: 'message_retention_days', value: 5 } }]);
  t.throws(() => decideUpdateStream(update({ description: 'x' }), { ...stream, deactivated: true }), { message: 'Invalid channel ID' });

  // Default channels.
  t.match(decideUpdateStream(update({ is_default_stream: true }), stream), [{ data: { property: 'is_default', value: true } }]);
  t.throws(() => decideUpdateStream(update({ is_default_stream: true }), privateStream), { message: 'A default channel cannot be private.' });
  const defaultStream = { ...stream, is_default: true };
  t.throws(() => decideUpdateStream(update({ is_private: true }), defaultStream), { message: 'A default channel cannot be private.' });
  t.match(decideUpdateStream(update({ is_private: true, is_default_stream: false }), defaultStream).map((e) => e.type === 'StreamPropertyChanged' && e.data.property), ['invite_only', 'history_public_to_subscribers', 'is_default']);
});

t.test('archiving and subscription properties', async (t) => {
  t.match(decideArchiveStream(actor(Role.ADMINISTRATOR), { ...stream, is_default: true }, false), [{ type: 'StreamArchived', data: { stream_id: 5, was_default: true } }]);
  t.throws(() => decideArchiveStream(actor(Role.MEMBER), stream, true), { message: 'Must be an organization administrator' });
  t.match(decideSubscriptionProperty(5, 7, 'in_home_view', false), { data: { property: 'is_muted', value: true } });
  t.match(decideSubscriptionProperty(5, 7, 'color', '#aabbcc'), { data: { property: 'color', value: '#aabbcc' } });
  t.throws(() => decideSubscriptionProperty(5, 7, 'color', '#abc'), { message: 'color is not a valid hex color code' });
  t.throws(() => decideSubscriptionProperty(5, 7, 'is_muted', 1), { message: 'is_muted is not a boolean' });
  t.throws(() => decideSubscriptionProperty(5, 7, 'role', true), { message: 'Unknown subscription property: role' });
  t.equal(pickColor(new Set(), 0), STREAM_ASSIGNMENT_COLORS[0]);
  t.equal(pickColor(new Set([STREAM_ASSIGNMENT_COLORS[0]!]), 1), STREAM_ASSIGNMENT_COLORS[1]);
  t.equal(pickColor(new Set(STREAM_ASSIGNMENT_COLORS), 25), STREAM_ASSIGNMENT_COLORS[1]);
});
