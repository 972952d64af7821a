import t from 'tap';
import { decideDrafts, type RecipientCheck } from '../../../src/domain/drafts/decider.js';

const anyone: RecipientCheck = { channelOk: () => true, userOk: () => true, deactivatedEmail: () => undefined };
const state = { user_id: 7, sync_enabled: true, draft_ids: [1, 2] };

t.test('CreateDrafts gives one event with the ids in order', async (t) => {
  const events = decideDrafts({
    type: 'CreateDrafts', ids: [3, 4], now: 1000, recipients: anyone,
    drafts: [{ type: 'private', to: [9, 8, 9], topic: 'x', content: 'hi  ' }, { type: 'stream', to: [5], topic: ' t ', content: 'c', timestamp: 12.7 }],
  }, state);
  t.same(events, [{
    type: 'DraftsCreated',
    data: {
      user_id: 7,
      drafts: [
        { id: 3, type: 'private', to: [8, 9], topic: '', content: 'hi', timestamp: 1000 },
        // The topic as typed: the real server does not strip a draft's topic.
        { id: 4, type: 'stream', to: [5], topic: ' t ', content: 'c', timestamp: 12 },
      ],
    },
  }]);
});

t.test('rules', async (t) => {
  t.throws(() => decideDrafts({ type: 'CreateDrafts', ids: [3], now: 1, recipients: anyone, drafts: [{ type: 'stream', to: [1, 2], topic: '', content: 'x' }] }, state),
    { message: 'Must specify exactly 1 channel ID for channel messages' });
  t.throws(() => decideDrafts({ type: 'CreateDrafts', ids: [3], now: 1, recipients: { ...anyone, channelOk: () => false }, drafts: [{ type: 'stream', to: [1], topic: '', content: 'x' }] }, state),
    { message: 'Invalid channel ID' });
  t.throws(() => decideDrafts({ type: 'EditDraft', draft_id: 9, now: 1, recipients: anyone, draft: { type: '', to: [], topic: '', content: 'x' } }, state),
    { message: 'Draft does not exist', status: 404 });
  t.throws(() => decideDrafts({ type: 'DeleteDraft', draft_id: 1 }, { ...state, sync_enabled: false }), { message: 'User has disabled synchronizing drafts.' });
  t.same(decideDrafts({ type: 'DeleteDraft', draft_id: 2 }, state), [{ type: 'DraftDeleted', data: { user_id: 7, draft_id: 2, reason: 'user' } }]);
  t.same(decideDrafts({ type: 'DeleteAllDrafts' }, { ...state, sync_enabled: false }).map((e) => e.data), [
    { user_id: 7, draft_id: 1, reason: 'sync_disabled' },
    { user_id: 7, draft_id: 2, reason: 'sync_disabled' },
  ]);
});

t.test('direct drafts show the other participants; only a channel draft topic is checked', async (t) => {
  const create = (draft: Record<string, unknown>, recipients = anyone) =>
    decideDrafts({ type: 'CreateDrafts', ids: [3], now: 1, recipients, drafts: [draft] }, state)[0]!.data as { drafts: Array<{ to: number[]; timestamp: number }> };
  // The real server keeps the conversation, and shows it without its author (the author alone for a note to self).
  t.same(create({ type: 'private', to: [7, 9, 8], topic: '', content: 'x' }).drafts[0]!.to, [8, 9]);
  t.same(create({ type: 'private', to: [7], topic: '', content: 'x' }).drafts[0]!.to, [7]);
  t.same(create({ type: 'private', to: [9], topic: 'a\u0000b', content: 'x' }).drafts[0]!.to, [9], 'a direct draft topic is ignored, null bytes and all');
  t.equal(create({ type: '', to: [], topic: '', content: 'x', timestamp: 1.9999999 }).drafts[0]!.timestamp, 2, 'kept to the microsecond');
  t.throws(() => create({ type: 'private', to: [9, 8], topic: '', content: 'x' }, { ...anyone, deactivatedEmail: (id) => (id === 9 ? 'gone@example.com' : undefined) }),
    { message: "'gone@example.com' is no longer using Zulip." });
});
