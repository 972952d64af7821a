import t from 'tap';
import {
  checkCanPost,
  decideDeleteMessage,
  decideEditMessage,
  decideReaction,
  normalizeContent,
  normalizeTopic,
  type EditCommand,
  type MessageState,
} from '../../../src/domain/messages/decider.js';
import { FlagBit, flagsOf, isRead } from '../../../src/domain/messages/flags.js';
import { alertedUsers } from '../../../src/services/render-context.js';
import { highlight } from '../../../src/read/messages.js';
import { Role } from '../../../src/domain/roles.js';

const state: MessageState = {
  message_id: 10, realm_id: 1, sender_id: 5, stream_id: 3, topic: 'topic', content: 'old', rendered_content: '<p>old</p>', date_sent: 1000, dm_user_ids: [],
};
const edit = (over: Partial<EditCommand>): EditCommand => ({
  actor: { user_id: 5, role: Role.MEMBER, is_bot: false },
  now: 1100,
  content: null,
  new_topic: null,
  new_stream_id: null,
  propagate_mode: 'change_one',
  moved_ids: [10],
  policy: { allow_message_editing: true, message_content_edit_limit_seconds: 600, edit_topic_policy: 5 },
  ...over,
});
const newContent = {
  content: 'new', rendered_content: '<p>new</p>', is_me_message: false, has_link: false, has_image: false, has_attachment: false,
  mentioned_user_ids: [], prev_mentioned_user_ids: [], stream_wildcard: false, topic_wildcard: false, attachment_paths: [],
};

t.test('content and topic normalization', async (t) => {
  t.throws(() => normalizeContent('  \n '), { message: 'Message must not be empty' });
  t.equal(normalizeContent('x'.repeat(10_001)).length, 10_000);
  t.equal(normalizeTopic('  spaced  ', false), 'spaced');
  t.equal(normalizeTopic('', false), '(no topic)');
  t.throws(() => normalizeTopic('', true), { message: 'Topics are required in this organization' });
  t.equal(normalizeTopic('t'.repeat(61), false), `${'t'.repeat(57)}...`);
});

t.test('posting rules', async (t) => {
  const stream = { stream_id: 1, name: 'c', invite_only: false, is_web_public: false, stream_post_policy: 1, deactivated: false };
  const member = { user_id: 1, role: Role.MEMBER, is_bot: false };
  const guest = { user_id: 2, role: Role.GUEST, is_bot: false };
  t.doesNotThrow(() => checkCanPost(member, stream, false), 'members post to public channels');
  t.throws(() => checkCanPost(guest, stream, false), { message: "Not authorized to send to channel 'c'" });
  t.throws(() => checkCanPost(member, { ...stream, invite_only: true }, false));
  t.throws(() => checkCanPost(member, { ...stream, stream_post_policy: 2 }, true), { message: 'Only organization administrators can send to this channel.' });
  t.doesNotThrow(() => checkCanPost({ ...member, role: Role.ADMINISTRATOR }, { ...stream, stream_post_policy: 2 }, true));
});

t.test('edits', async (t) => {
  const [event] = decideEditMessage(edit({ content: newContent }), state);
  t.match(event, { type: 'MessageEdited', data: { message_id: 10, content: 'new', prev_content: 'old', new_topic: null, attachment_paths: [] } });
  t.throws(() => decideEditMessage(edit({ content: newContent, actor: { user_id: 6, role: Role.OWNER, is_bot: false } }), state),
    { message: "You don't have permission to edit this message" });
  t.throws(() => decideEditMessage(edit({ content: newContent, now: 5000 }), state), { message: 'The time limit for editing this message has passed' });
  t.equal(decideEditMessage(edit({ content: newContent, now: 1000 + 600 + 20 }), state).length, 1, 'the real server allows 20 s past the limit');
  t.throws(() => decideEditMessage(edit({ content: newContent, now: 1000 + 600 + 21 }), state), { message: 'The time limit for editing this message has passed' });
  t.equal(decideEditMessage(edit({ content: { ...newContent, content: 'old' } }), state).length, 1, 'the same content is still an edit (a history entry), as on the real server');
  const [moved] = decideEditMessage(edit({ new_topic: 'other', moved_ids: [10, 11], propagate_mode: 'change_all' }), state);
  t.match(moved, { data: { message_ids: [10, 11], new_topic: 'other', content: null, attachment_paths: null } });
  t.notOk('prior_moved_receptions' in moved!.data, 'a move within the channel carries no receptions');
  const prior = [{ user_id: 4, received: true, message_ids: [10] }];
  const [between] = decideEditMessage(edit({ new_stream_id: 9, prior_moved_receptions: prior }), state);
  t.same(between!.data.prior_moved_receptions, prior, 'a move between channels carries the receptions an earlier move wrote');
  t.same(decideEditMessage(edit({ new_stream_id: 9 }), state)[0]!.data.prior_moved_receptions, [], 'none: []');
  t.throws(() => decideEditMessage(edit({ new_topic: 'x' }), { ...state, stream_id: null }), { message: 'Direct messages cannot have topics.' });
  t.throws(() => decideEditMessage(edit({ new_stream_id: 4 }), { ...state, stream_id: null }), { message: 'Direct messages cannot be moved to channels.' });
  const guest = { user_id: 7, role: Role.GUEST, is_bot: false };
  t.ok(decideEditMessage(edit({ new_topic: 'x', actor: guest }), state).length === 1, 'edit_topic_policy 5: everyone may rename topics');
  t.throws(() => decideEditMessage(edit({ new_topic: 'x', actor: guest, policy: { ...edit({}).policy, edit_topic_policy: 1 } }), state));
  t.throws(() => decideEditMessage(edit({ new_topic: 'x', policy: { ...edit({}).policy, edit_topic_policy: 2 } }), state), 'admins only');
  t.throws(() => decideEditMessage(edit({ new_topic: 'x', actor: { user_id: 8, role: Role.OWNER, is_bot: false }, policy: { ...edit({}).policy, edit_topic_policy: 6 } }), state),
    { message: "You don't have permission to edit this message" }, 'nobody: not even owners');
  t.throws(() => decideEditMessage(edit({ new_topic: 'x', actor: { user_id: 9, role: Role.MEMBER, is_bot: false, is_full_member: false }, policy: { ...edit({}).policy, edit_topic_policy: 3 } }), state),
    { message: "You don't have permission to edit this message" }, 'full members only: not a member still in the waiting period');
  t.equal(decideEditMessage(edit({ new_topic: 'x', actor: { user_id: 9, role: Role.MODERATOR, is_bot: false, is_full_member: false }, policy: { ...edit({}).policy, edit_topic_policy: 3 } }), state).length, 1, 'moderators rank above full members');
  t.throws(() => decideEditMessage(edit({ new_stream_id: 9, actor: guest }), state), { message: "You don't have permission to move this message" });
});

t.test('deletion and reactions', async (t) => {
  const policy = { delete_own_message_policy: 5, message_content_delete_limit_seconds: 600 };
  t.match(decideDeleteMessage({ user_id: 5, role: Role.MEMBER, is_bot: false }, 1100, state, policy), [{ type: 'MessagesDeleted', data: { message_ids: [10], stream_id: 3, topic: 'topic' } }]);
  t.throws(() => decideDeleteMessage({ user_id: 6, role: Role.MEMBER, is_bot: false }, 1100, state, policy));
  t.ok(decideDeleteMessage({ user_id: 6, role: Role.ADMINISTRATOR, is_bot: false }, 9999, state, policy).length === 1);
  t.equal(decideDeleteMessage({ user_id: 6, role: Role.MEMBER, is_bot: false }, 1100, state, policy, 6).length, 1, "a bot's owner deletes its messages");
  t.equal(decideDeleteMessage({ user_id: 5, role: Role.MEMBER, is_bot: false }, 1600, state, policy).length, 1, 'at the limit');
  t.throws(() => decideDeleteMessage({ user_id: 5, role: Role.MEMBER, is_bot: false }, 1601, state, policy), { message: 'The time limit for deleting this message has passed' }, 'no grace period');
  const reaction = { op: 'add' as const, message_id: 10, user_id: 5, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' };
  t.match(decideReaction(reaction, false), [{ type: 'ReactionAdded' }]);
  t.throws(() => decideReaction(reaction, true), { code: 'REACTION_ALREADY_EXISTS' });
  t.throws(() => decideReaction({ ...reaction, op: 'remove' }, false), { code: 'REACTION_DOES_NOT_EXIST' });
});

t.test('sparse flags', async (t) => {
  const base = { userId: 1, senderId: 2, messageId: 50, readThrough: 0, bits: 0, received: true, streamWildcard: false };
  t.same(flagsOf(base), []);
  t.same(flagsOf({ ...base, readThrough: 50 }), ['read'], 'under the watermark: read');
  t.same(flagsOf({ ...base, readThrough: 50, bits: FlagBit.UNREAD }), [], 'marked unread under the watermark');
  t.same(flagsOf({ ...base, bits: FlagBit.READ | FlagBit.STARRED | FlagBit.MENTIONED }), ['read', 'starred', 'mentioned']);
  t.same(flagsOf({ ...base, streamWildcard: true }), ['stream_wildcard_mentioned', 'wildcard_mentioned']);
  t.same(flagsOf({ ...base, received: false, streamWildcard: true }), ['read', 'historical']);
  t.equal(isRead({ ...base, bits: FlagBit.READ }), true);
});

t.test('alert words and highlighting', async (t) => {
  const words = new Map([[1, ['pine']], [2, ['apple pie']]]);
  t.same(alertedUsers(words, [1, 2], 'I like PINE trees'), [1]);
  t.same(alertedUsers(words, [1, 2], 'pineapple'), [], 'word boundaries');
  t.same(alertedUsers(words, [1, 2], 'Apple Pie!'), [2]);
  t.equal(highlight('<p class="run">We run</p>', ['run']), '<p class="run">We <span class="highlight">run</span></p>', 'never inside tags');
  t.equal(highlight('a<b>', ['a'], true), '<span class="highlight">a</span>&lt;b&gt;');
});
