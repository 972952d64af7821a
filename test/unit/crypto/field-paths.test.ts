import t from 'tap';
import { forEachAt, mapAt } from '../../../src/eventstore/crypto/field-paths.js';
import { keysDestroyedBy } from '../../../src/eventstore/crypto/event-crypto.js';
import { SEALING_RULES, uploadKeyId } from '../../../src/eventstore/crypto/personal-fields.js';

t.test('paths reach top-level fields, fields of objects and of every element of a list', async (t) => {
  const data = { user_id: 3, drafts: [{ id: 1, content: 'a', topic: 't' }, { id: 2, content: 'b', topic: 'u' }], draft: { content: 'c' } };
  const seen: string[] = [];
  forEachAt(data, 'drafts.*.content', (value, path) => seen.push(`${path}=${String(value)}`));
  forEachAt(data, 'draft.content', (value, path) => seen.push(`${path}=${String(value)}`));
  forEachAt(data, 'user_id', (value, path) => seen.push(`${path}=${String(value)}`));
  t.same(seen, ['drafts.0.content=a', 'drafts.1.content=b', 'draft.content=c', 'user_id=3']);

  const upper = mapAt(data, 'drafts.*.content', (value) => String(value).toUpperCase());
  t.same(upper.drafts.map((d) => d.content), ['A', 'B']);
  t.equal(data.drafts[0]!.content, 'a', 'the input is not changed');
  t.equal(upper.draft, data.draft, 'untouched branches are shared');
  t.equal(mapAt(data, 'missing.content', () => 'x'), data, 'a missing path changes nothing');
  t.equal(mapAt(data, 'drafts.*.content', (value) => value), data, 'an identity map returns the same object');
  t.same(mapAt({ drafts: 'not a list' }, 'drafts.*.content', () => 'x'), { drafts: 'not a list' });
});

t.test('the keys ended things destroy are derived from the events that end them', async (t) => {
  t.same(keysDestroyedBy({ type: 'InvitationAccepted', data: { invite_id: 7, realm_id: 1, user_id: 9 } }), ['invite:7']);
  t.same(keysDestroyedBy({ type: 'InvitationRevoked', data: { invite_id: 8 } }), ['invite:8']);
  t.same(keysDestroyedBy({ type: 'ScheduledMessageDelivered', data: { scheduled_message_id: 4, message_id: 5 } }), ['scheduled-message:4']);
  t.same(keysDestroyedBy({ type: 'AttachmentDeleted', data: { path_id: '1/ab/cd/name.txt' } }), ['upload:1/ab/cd/name.txt'], 'a plaintext (old) event: the old key name');
  const sealed = { $enc: 1, k: uploadKeyId('1/ab/cd/name.txt'), iv: '', ct: '', tag: '' };
  t.same(keysDestroyedBy({ type: 'AttachmentDeleted', data: { path_id: sealed } }), [uploadKeyId('1/ab/cd/name.txt')]);
  t.notOk(uploadKeyId('1/ab/cd/name.txt').includes('name'), "an upload's key id does not carry its file name");
  t.same(keysDestroyedBy({ type: 'MessageSent', data: {} }), []);
});

t.test('scheduled messages and drafts seal only their text; invitations their address', async (t) => {
  const scheduled = SEALING_RULES.ScheduledMessageCreated!;
  t.same(scheduled.keyOf({ scheduled_message: { id: 3, sender_id: 9 } }), { keyId: 'scheduled-message:3', scope: 'scheduled_message', subject: '9' });
  t.same(SEALING_RULES.DraftsCreated!.keyOf({ user_id: 9 })?.keyId, 'user:9');
  t.same(SEALING_RULES.InvitationSent!.keyOf({ invite_id: 2 })?.keyId, 'invite:2');
  t.same(SEALING_RULES.EmailChangeRequested!.fields, ['old_email', 'new_email']);
});
