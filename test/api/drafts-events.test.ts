import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { makeChannel } from './drafts-helpers.js';

t.test('drafts events keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id] });
  const register = { event_types: ['drafts'], fetch_event_types: ['drafts'] };

  let ids: number[] = [];
  const added = await verifyAction(t, s, alice, async () => {
    const r = await s.api('POST', '/drafts', alice, {
      drafts: [
        { type: 'stream', to: [channel], topic: 'a', content: 'one', timestamp: 10 },
        { type: 'private', to: [bob.id], topic: '', content: 'two' },
      ],
    });
    ids = r.body.ids;
  }, { register });
  t.match(added, [{ type: 'drafts', op: 'add', drafts: [{ id: ids[0], type: 'stream', to: [channel], topic: 'a', content: 'one', timestamp: 10 }, { id: ids[1] }] }]);

  const updated = await verifyAction(t, s, alice, () =>
    s.api('PATCH', `/drafts/${ids[0]}`, alice, { draft: { type: '', to: [], topic: '', content: 'changed', timestamp: 20 } }), { register });
  t.match(updated, [{ type: 'drafts', op: 'update', draft: { id: ids[0], type: '', content: 'changed', timestamp: 20 } }]);

  const removed = await verifyAction(t, s, alice, () => s.api('DELETE', `/drafts/${ids[1]}`, alice), { register });
  t.same(removed.map(({ id: _id, ...e }) => e), [{ type: 'drafts', op: 'remove', draft_id: ids[1] }]);

  // Others get nothing.
  const other = await verifyAction(t, s, bob, () => s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'x' }] }), { register });
  t.same(other, []);
});
