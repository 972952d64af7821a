import t from 'tap';
import { decideUser, nameForUniqueness, validateFullName, type UserState } from '../../../src/domain/users/decider.js';
import { Role } from '../../../src/domain/roles.js';

const bot: UserState = {
  user_id: 10, role: Role.MEMBER, is_active: true, is_bot: true, bot_owner_id: 2, full_name: 'Bot', is_billing_admin: false,
  timezone: '', avatar_source: 'G', avatar_version: 1,
  default_sending_stream_id: null, default_events_register_stream_id: null, default_all_public_streams: false,
};
const owner = { user_id: 2, role: Role.MEMBER };
const stranger = { user_id: 3, role: Role.MEMBER };
const admin = { user_id: 4, role: Role.ADMINISTRATOR };
const human = (user_id: number) => ({ user_id, is_active: true, is_bot: false });

t.test('ChangeBotOwner', async (t) => {
  t.same(decideUser({ type: 'ChangeBotOwner', actor: owner, new_owner: human(3) }, bot),
    [{ type: 'UserBotOwnerChanged', data: { user_id: 10, bot_owner_id: 3, old_bot_owner_id: 2 } }]);
  t.same(decideUser({ type: 'ChangeBotOwner', actor: admin, new_owner: human(2) }, bot), [], 'same owner: nothing');
  t.throws(() => decideUser({ type: 'ChangeBotOwner', actor: stranger, new_owner: human(3) }, bot), { message: 'Insufficient permission' });
  t.throws(() => decideUser({ type: 'ChangeBotOwner', actor: owner, new_owner: null }, bot), { message: 'Failed to change owner, no such user' });
  t.throws(() => decideUser({ type: 'ChangeBotOwner', actor: owner, new_owner: { ...human(3), is_active: false } }, bot), { message: 'Failed to change owner, user is deactivated' });
  t.throws(() => decideUser({ type: 'ChangeBotOwner', actor: owner, new_owner: { ...human(11), is_bot: true } }, bot), { message: "Failed to change owner, bots can't own other bots" });
  t.throws(() => decideUser({ type: 'ChangeBotOwner', actor: admin, new_owner: human(3) }, { ...bot, is_bot: false }), { message: 'No such bot' });
});

t.test('ChangeAvatar always takes the next version', async (t) => {
  t.same(decideUser({ type: 'ChangeAvatar', actor: { user_id: 10, role: Role.MEMBER }, avatar_source: 'U' }, bot),
    [{ type: 'UserAvatarChanged', data: { user_id: 10, avatar_source: 'U', avatar_version: 2 } }]);
  t.same(decideUser({ type: 'ChangeAvatar', actor: owner, avatar_source: 'G' }, { ...bot, avatar_version: 7 }),
    [{ type: 'UserAvatarChanged', data: { user_id: 10, avatar_source: 'G', avatar_version: 8 } }], 'back to Gravatar is a new version too');
  t.throws(() => decideUser({ type: 'ChangeAvatar', actor: stranger, avatar_source: 'U' }, bot), { message: 'Insufficient permission' });
});

t.test('ChangeBotDefault', async (t) => {
  t.same(decideUser({ type: 'ChangeBotDefault', actor: owner, property: 'default_sending_stream', value: 5 }, bot),
    [{ type: 'BotDefaultChanged', data: { user_id: 10, property: 'default_sending_stream', value: 5 } }]);
  t.same(decideUser({ type: 'ChangeBotDefault', actor: admin, property: 'default_all_public_streams', value: false }, bot), [], 'unchanged: nothing');
  t.throws(() => decideUser({ type: 'ChangeBotDefault', actor: stranger, property: 'default_events_register_stream', value: 5 }, bot), { message: 'Insufficient permission' });
});

t.test('ChangeRole checks the owner rule before the administrator rule', async (t) => {
  t.throws(() => decideUser({ type: 'ChangeRole', actor: owner, role: Role.OWNER, active_owner_count: 1 }, bot), { message: 'Must be an organization owner' });
  t.throws(() => decideUser({ type: 'ChangeRole', actor: owner, role: Role.MODERATOR, active_owner_count: 1 }, bot), { message: 'Must be an organization administrator' });
});

t.test('validateFullName: the real server name rules', async (t) => {
  t.equal(validateFullName('  Ann  '), 'Ann');
  t.equal(validateFullName('Hello- 12iago|72k'), 'Hello- 12iago|72k');
  t.equal(validateFullName('é'.repeat(100)), 'é'.repeat(100), 'counted in characters');
  t.throws(() => validateFullName('a'), { message: 'Name too short!' });
  t.throws(() => validateFullName('a'.repeat(101)), { message: 'Name too long!' });
  for (const bad of ['Ann*', 'Ann\u200b', 'Ann\u0085', 'Ann@']) t.throws(() => validateFullName(bad), { message: 'Invalid characters in name!' }, JSON.stringify(bad));
  t.throws(() => validateFullName('iago|72'), { message: 'Invalid format!' });
  t.equal(nameForUniqueness('𝕚𝕒𝕘𝕠'), nameForUniqueness('IAGO'));
  t.equal(nameForUniqueness('Straße'), nameForUniqueness('STRASSE'));
});

const ownerHuman: UserState = { ...bot, user_id: 20, is_bot: false, bot_owner_id: null, role: Role.OWNER, full_name: 'Owner' };
const ownerActor = { user_id: 21, role: Role.OWNER };

t.test('DeactivateUser: the last-owner rules count ownerHumans only; one own account is refused with its entity', async (t) => {
  t.throws(() => decideUser({ type: 'DeactivateUser', actor: ownerActor, active_owner_count: 1 }, ownerHuman), { message: 'Cannot deactivate the only organization owner', code: 'BAD_REQUEST' });
  t.same(decideUser({ type: 'DeactivateUser', actor: ownerActor, active_owner_count: 1 }, { ...bot, role: Role.OWNER }), [{ type: 'UserDeactivated', data: { user_id: 10 } }]);
  t.throws(() => decideUser({ type: 'DeactivateUser', actor: stranger, active_owner_count: 2 }, ownerHuman), { message: 'Insufficient permission' });
  t.throws(() => decideUser({ type: 'DeactivateUser', actor: admin, active_owner_count: 2 }, { ...ownerHuman, role: Role.MEMBER, is_active: false }), { message: 'User is deactivated' });
  const self = { user_id: 20, role: Role.OWNER };
  t.throws(() => decideUser({ type: 'DeactivateUser', actor: self, active_owner_count: 1, own: { active_user_count: 1 } }, ownerHuman),
    { message: 'Cannot deactivate the only user.', code: 'CANNOT_DEACTIVATE_LAST_USER', extra: { is_last_owner: false, entity: 'user' } });
  t.throws(() => decideUser({ type: 'DeactivateUser', actor: self, active_owner_count: 1, own: { active_user_count: 2 } }, ownerHuman),
    { message: 'Cannot deactivate the only organization owner.', extra: { is_last_owner: true, entity: 'organization owner' } });
  t.same(decideUser({ type: 'DeactivateUser', actor: self, active_owner_count: 2, own: { active_user_count: 2 } }, ownerHuman), [{ type: 'UserDeactivated', data: { user_id: 20 } }]);
});

t.test('ReactivateUser', async (t) => {
  const gone = { ...bot, is_active: false };
  t.same(decideUser({ type: 'ReactivateUser', actor: admin }, { ...bot }), [], 'already active: nothing');
  t.throws(() => decideUser({ type: 'ReactivateUser', actor: stranger }, gone), { message: 'Insufficient permission' });
  t.throws(() => decideUser({ type: 'ReactivateUser', actor: owner, active_name_taken: true, bot_owner_active: true }, gone), { message: /^There is already an active bot named "Bot"/ });
  t.same(decideUser({ type: 'ReactivateUser', actor: owner, active_name_taken: false, bot_owner_active: true }, gone), [{ type: 'UserReactivated', data: { user_id: 10 } }]);
  t.same(decideUser({ type: 'ReactivateUser', actor: admin, active_name_taken: false, bot_owner_active: false }, gone), [
    { type: 'UserReactivated', data: { user_id: 10 } },
    { type: 'UserBotOwnerChanged', data: { user_id: 10, bot_owner_id: 4, old_bot_owner_id: 2 } },
  ], "an orphaned bot is adopted by whoever reactivates it");
});
