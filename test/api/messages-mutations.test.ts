import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { validateSingleMessage } from '../helpers/openapi-message.js';

const newest = (narrow: unknown[] = [], extra: Record<string, unknown> = {}) => ({ anchor: 'newest', num_before: 100, num_after: 0, narrow, ...extra });

// One server per file (each start costs seconds); every test uses its own users and channels.
const shared = startTestServer(t);

t.test('edit, history, delete', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'general', [bob]);
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, alice, 'other', [bob, carol]);
  const m1 = await sendStream(s, alice, 'general', 'old topic', 'first version');
  const m2 = await sendStream(s, alice, 'general', 'old topic', 'second message');
  const m3 = await sendStream(s, alice, 'general', 'old topic', 'third message');

  const notMine = await s.api('PATCH', `/messages/${m1}`, bob, { content: 'hijack' });
  t.equal(notMine.status, 400);
  t.equal(notMine.body.msg, "You don't have permission to edit this message");

  const edited = await s.api('PATCH', `/messages/${m1}`, alice, { content: 'second **version**' });
  t.equal(edited.status, 200, JSON.stringify(edited.body));
  const after = await s.api('GET', `/messages/${m1}`, bob);
  t.match(after.body.message.content, /<strong>version<\/strong>/);
  t.type(after.body.message.last_edit_timestamp, 'number');
  t.equal(after.body.message.edit_history.length, 1);
  t.equal(after.body.message.edit_history[0].prev_content, 'first version');
  t.equal(after.body.message.edit_history[0].user_id, alice.id);
  t.ok(validateSingleMessage(after.body.message), JSON.stringify(validateSingleMessage.errors));

  const moved = await s.api('PATCH', `/messages/${m2}`, alice, { topic: 'new topic', propagate_mode: 'change_later' });
  t.equal(moved.status, 200, JSON.stringify(moved.body));
  const topics = await s.api('GET', '/messages', bob, newest([{ operator: 'channel', operand: 'general' }, { operator: 'topic', operand: 'new topic' }]));
  t.same(topics.body.messages.map((m: { id: number }) => m.id), [m2, m3]);
  t.equal(topics.body.messages[0].edit_history[0].prev_topic, 'old topic');

  const history = await s.api('GET', `/messages/${m1}/history`, bob);
  t.equal(history.status, 200);
  t.same(history.body.message_history.map((h: { content: string }) => h.content), ['first version', 'second **version**']);
  t.equal(history.body.message_history[1].prev_content, 'first version');

  const streamMove = await s.api('PATCH', `/messages/${m3}`, alice, { stream_id: (await s.api('GET', '/get_stream_id', alice, { stream: 'other' })).body.stream_id });
  t.equal(streamMove.status, 200, JSON.stringify(streamMove.body));
  const inOther = await s.api('GET', '/messages', bob, newest([{ operator: 'channel', operand: 'other' }]));
  t.same(inOther.body.messages.map((m: { id: number }) => m.id), [m3]);
  const carolView = await s.api('GET', `/messages/${m3}`, carol);
  t.same(carolView.body.message.flags, ['read'], 'a subscriber of the new channel gains the moved message as read');

  const cannot = await s.api('DELETE', `/messages/${m1}`, bob);
  t.equal(cannot.status, 400);
  const deleted = await s.api('DELETE', `/messages/${m1}`, alice);
  t.equal(deleted.status, 200);
  t.equal((await s.api('GET', `/messages/${m1}`, bob)).body.msg, 'Invalid message(s)');
  const adminDelete = await s.api('DELETE', `/messages/${m2}`, s.owner);
  t.equal(adminDelete.status, 200, 'administrators delete anyone\'s message');
});

t.test('reactions', async (t) => {
  const s = await shared;
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'general-1', [bob]);
  const m = await sendStream(s, alice, 'general-1', 't', 'react to me');

  t.equal((await s.api('POST', `/messages/${m}/reactions`, bob, { emoji_name: 'smile' })).status, 200);
  const dup = await s.api('POST', `/messages/${m}/reactions`, bob, { emoji_name: 'smile' });
  t.equal(dup.body.code, 'REACTION_ALREADY_EXISTS');
  t.equal(dup.body.msg, 'Reaction already exists.');
  t.equal((await s.api('POST', `/messages/${m}/reactions`, alice, { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' })).status, 200);
  const unknown = await s.api('POST', `/messages/${m}/reactions`, bob, { emoji_name: 'definitely_not_an_emoji' });
  t.equal(unknown.status, 400);
  const badCode = await s.api('DELETE', `/messages/${m}/reactions`, bob, { emoji_code: 'zzzz', reaction_type: 'unicode_emoji' });
  t.equal(badCode.body.msg, 'Invalid emoji code');

  const read = await s.api('GET', `/messages/${m}`, alice);
  t.equal(read.body.message.reactions.length, 2);
  t.match(read.body.message.reactions[0], { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji', user_id: bob.id, user: { id: bob.id, full_name: 'Bob' } });
  t.ok(validateSingleMessage(read.body.message), JSON.stringify(validateSingleMessage.errors));

  t.equal((await s.api('DELETE', `/messages/${m}/reactions`, bob, { emoji_name: 'smile' })).status, 200);
  const gone = await s.api('DELETE', `/messages/${m}/reactions`, bob, { emoji_name: 'smile' });
  t.equal(gone.body.code, 'REACTION_DOES_NOT_EXIST');
  t.equal(gone.body.msg, "Reaction doesn't exist.");
  const left = await s.api('GET', `/messages/${m}`, alice);
  t.same(left.body.message.reactions.map((r: { user_id: number }) => r.user_id), [alice.id]);
});

t.test('delete_topic', async (t) => {
  const s = await shared;
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'general-2', [admin]);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await sendStream(s, alice, 'general-2', 'doomed', `m${i}`));
  const keep = await sendStream(s, alice, 'general-2', 'kept', 'stay');

  const denied = await s.api('POST', `/streams/${sid}/delete_topic`, alice, { topic_name: 'doomed' });
  t.equal(denied.status, 400);
  t.equal(denied.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal(denied.body.msg, 'Must be an organization administrator');

  const { deleteTopicLimits } = await import('../../src/services/messages.js');
  deleteTopicLimits.batchSize = 2;
  deleteTopicLimits.budgetMs = -1;
  const partial = await s.api('POST', `/streams/${sid}/delete_topic`, admin, { topic_name: 'doomed' });
  t.equal(partial.body.complete, false, 'an exhausted budget answers complete: false');
  const afterPartial = await s.api('GET', '/messages', alice, newest([{ operator: 'channel', operand: 'general-2' }]));
  t.same(afterPartial.body.messages.map((m: { id: number }) => m.id), [ids[0], ids[1], ids[2], keep], 'one batch went, newest first');
  deleteTopicLimits.budgetMs = 10_000;
  const done = await s.api('POST', `/streams/${sid}/delete_topic`, admin, { topic_name: 'doomed' });
  t.equal(done.body.complete, true);
  const left = await s.api('GET', '/messages', alice, newest([{ operator: 'channel', operand: 'general-2' }]));
  t.same(left.body.messages.map((m: { id: number }) => m.id), [keep]);
  const stream = await s.api('GET', `/streams/${sid}`, alice);
  if (stream.status === 200) t.equal(stream.body.stream.first_message_id, keep, 'first_message_id follows the deletion');
});

