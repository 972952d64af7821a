import t from 'tap';
import { decideEditMessage, type EditCommand, type MessageState } from '../../../src/domain/messages/decider.js';
import { ApiError } from '../../../src/domain/errors.js';
import { Role } from '../../../src/domain/roles.js';

// Move time limits (move_messages_within_stream_limit_seconds, move_messages_between_streams_limit_seconds):
// members below moderator are held to them, with the real server's 20 s grace.
const state: MessageState = {
  message_id: 10, realm_id: 1, sender_id: 5, stream_id: 3, topic: 'topic', content: 'c', rendered_content: '<p>c</p>', date_sent: 10_000, dm_user_ids: [],
};
const move = (over: Partial<EditCommand>): EditCommand => ({
  actor: { user_id: 5, role: Role.MEMBER, is_bot: false },
  now: 10_000,
  content: null,
  new_topic: null,
  new_stream_id: null,
  propagate_mode: 'change_one',
  moved_ids: [10],
  moved_dates: [10_000],
  policy: {
    allow_message_editing: true, message_content_edit_limit_seconds: 600, edit_topic_policy: 5, move_messages_between_streams_policy: 1,
    move_messages_within_stream_limit_seconds: 100, move_messages_between_streams_limit_seconds: 1000,
  },
  ...over,
});

t.test('topic moves within a channel', async (t) => {
  t.equal(decideEditMessage(move({ new_topic: 'x', now: 10_120 }), state).length, 1, 'inside limit + grace');
  t.throws(() => decideEditMessage(move({ new_topic: 'x', now: 10_121 }), state), { message: "The time limit for editing this message's topic has passed.", code: 'BAD_REQUEST' });
  t.equal(decideEditMessage(move({ new_topic: 'x', now: 99_999, actor: { user_id: 5, role: Role.MODERATOR, is_bot: false } }), state).length, 1, 'moderators are not limited');
  t.equal(decideEditMessage(move({ new_topic: 'x', now: 99_999, actor: { user_id: 7, role: Role.ADMINISTRATOR, is_bot: false } }), state).length, 1, 'nor administrators');
  const unlimited = move({ new_topic: 'x', now: 99_999 });
  unlimited.policy.move_messages_within_stream_limit_seconds = null;
  t.equal(decideEditMessage(unlimited, state).length, 1, 'null: no limit');
  t.throws(() => decideEditMessage(move({ new_topic: ' topic ', now: 99_999 }), state), { message: 'Nothing to change' }, 'an unchanged topic (once stripped) is no move');
});

t.test('moves between channels', async (t) => {
  t.equal(decideEditMessage(move({ new_stream_id: 4, now: 11_000 }), state).length, 1, 'the topic limit does not apply to a channel-only move');
  t.throws(() => decideEditMessage(move({ new_stream_id: 4, now: 11_021 }), state), { message: "The time limit for editing this message's channel has passed", code: 'BAD_REQUEST' });
  t.throws(() => decideEditMessage(move({ new_stream_id: 4, new_topic: 'x', now: 10_500 }), state), { message: "The time limit for editing this message's topic has passed." },
    'moving both checks both limits');
});

t.test('change_all: every message of the topic must be within the limit', async (t) => {
  const cmd = move({ new_topic: 'x', propagate_mode: 'change_all', now: 10_050, moved_ids: [10, 4, 6, 12], moved_dates: [10_000, 9_000, 9_950, 10_040] });
  const err = t.throws(() => decideEditMessage(cmd, state)) as unknown as ApiError;
  t.ok(err instanceof ApiError);
  t.equal(err.code, 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED');
  t.equal(err.status, 400);
  t.equal(err.message, 'You only have permission to move the 3/4 most recent messages in this topic.');
  t.same(err.extra, { first_message_id_allowed_to_move: 6, total_messages_allowed_to_move: 3, total_messages_in_topic: 4 });
  t.equal(decideEditMessage({ ...cmd, propagate_mode: 'change_later' }, state).length, 1, 'change_later checks only the target message');
  t.equal(decideEditMessage({ ...cmd, actor: { user_id: 5, role: Role.MODERATOR, is_bot: false } }, state).length, 1, 'moderators move the whole topic');
  const stream = move({ new_stream_id: 4, propagate_mode: 'change_all', now: 10_050, moved_ids: [10, 4], moved_dates: [10_000, 9_000] });
  const err2 = t.throws(() => decideEditMessage(stream, state)) as unknown as ApiError;
  t.same(err2.extra, { first_message_id_allowed_to_move: 10, total_messages_allowed_to_move: 1, total_messages_in_topic: 2 }, 'a channel move is held to the channel limit');
  const none = move({ new_topic: 'x', propagate_mode: 'change_all', now: 10_050, moved_ids: [10, 4], moved_dates: [10_000, 1] });
  none.policy.move_messages_within_stream_limit_seconds = null;
  t.equal(decideEditMessage(none, state).length, 1, 'no applicable limit: no check');
});
