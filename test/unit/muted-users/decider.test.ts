import t from 'tap';
import { decideMutedUsers, evolveMutedUsers, noMutedUsers, type MutedUsersState } from '../../../src/domain/muted-users/decider.js';
import type { MutedUsersEvent } from '../../../src/domain/muted-users/events.js';

const given = (events: MutedUsersEvent[]): MutedUsersState => events.reduce(evolveMutedUsers, noMutedUsers);

t.test('mute: the event carries the whole list, sorted by id', async (t) => {
  const state = given([{ type: 'UserMuted', data: { user_id: 1, muted_user_id: 9, date_muted: 100, muted_users: [{ id: 9, timestamp: 100 }] } }]);
  const events = decideMutedUsers({ type: 'MuteUser', user_id: 1, muted_user_id: 3, date_muted: 200 }, state);
  t.same(events, [{ type: 'UserMuted', data: { user_id: 1, muted_user_id: 3, date_muted: 200, muted_users: [{ id: 3, timestamp: 200 }, { id: 9, timestamp: 100 }] } }]);
});

t.test('mute: self and twice are refused', async (t) => {
  t.throws(() => decideMutedUsers({ type: 'MuteUser', user_id: 1, muted_user_id: 1, date_muted: 1 }, noMutedUsers), { message: 'Cannot mute self' });
  const state = given([{ type: 'UserMuted', data: { user_id: 1, muted_user_id: 2, date_muted: 1, muted_users: [{ id: 2, timestamp: 1 }] } }]);
  t.throws(() => decideMutedUsers({ type: 'MuteUser', user_id: 1, muted_user_id: 2, date_muted: 5 }, state), { message: 'User already muted' });
});

t.test('unmute: only a muted user', async (t) => {
  t.throws(() => decideMutedUsers({ type: 'UnmuteUser', user_id: 1, muted_user_id: 2 }, noMutedUsers), { message: 'User is not muted' });
  const state = given([{ type: 'UserMuted', data: { user_id: 1, muted_user_id: 2, date_muted: 1, muted_users: [{ id: 2, timestamp: 1 }] } }]);
  t.same(decideMutedUsers({ type: 'UnmuteUser', user_id: 1, muted_user_id: 2 }, state), [{ type: 'UserUnmuted', data: { user_id: 1, muted_user_id: 2, muted_users: [] } }]);
});
