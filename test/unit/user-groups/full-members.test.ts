import t from 'tap';
import { belongsInFullMembers, fullMembersEvents, waitingPeriodDays, withinWaitingPeriod } from '../../../src/domain/user-groups/full-members.js';
import { Role } from '../../../src/domain/roles.js';

const DAY_MS = 86_400_000;
const now = new Date('2024-06-20T12:00:00Z');
const joined = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY_MS).toISOString();
const user = (user_id: number, role: number, daysAgo: number, is_active = true) => ({ user_id, role, is_active, date_joined: joined(daysAgo) });

t.test('the waiting period counts whole days, as timedelta.days', async (t) => {
  t.notOk(withinWaitingPeriod(joined(0), 0, now), 'threshold 0: nobody waits');
  t.ok(withinWaitingPeriod(joined(9.99), 10, now));
  t.notOk(withinWaitingPeriod(joined(10), 10, now));
  t.notOk(withinWaitingPeriod('not a date', 10, now), 'an unreadable date does not hold anyone back');
  t.equal(waitingPeriodDays({}), 0, 'the default');
  t.equal(waitingPeriodDays({ waiting_period_threshold: 7 }), 7);
});

t.test('only active members past the waiting period belong', async (t) => {
  t.ok(belongsInFullMembers(user(1, Role.MEMBER, 11), 10, now));
  t.notOk(belongsInFullMembers(user(1, Role.MEMBER, 3), 10, now), 'a new member');
  t.notOk(belongsInFullMembers(user(1, Role.MEMBER, 11, false), 10, now), 'deactivated');
  for (const role of [Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR, Role.GUEST]) {
    t.notOk(belongsInFullMembers(user(1, role, 100), 0, now), `role ${role}: in it through subgroups or not at all`);
  }
});

t.test('events bring the group in line for the listed users only, removals first', async (t) => {
  const users = [user(3, Role.MEMBER, 20), user(1, Role.MEMBER, 20), user(2, Role.MEMBER, 2), user(4, Role.MODERATOR, 20), user(5, Role.MEMBER, 20)];
  const current = new Set([2, 4, 5, 99]);
  t.same(fullMembersEvents(7, 40, users, current, 10, now), [
    { type: 'UserGroupMembersRemoved', data: { realm_id: 7, group_id: 40, user_ids: [2, 4] } },
    { type: 'UserGroupMembersAdded', data: { realm_id: 7, group_id: 40, user_ids: [1, 3] } },
  ], '99 is not listed: left alone; 5 already belongs');
  t.same(fullMembersEvents(7, 40, [user(5, Role.MEMBER, 20)], current, 10, now), [], 'nothing to change: no event');
});
