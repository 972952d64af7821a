import t from 'tap';
import { decideDrafts, type RecipientCheck } from '../../../src/domain/drafts/decider.js';

const anyone: RecipientCheck = { channelOk: () => true, userOk: () => true };
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
