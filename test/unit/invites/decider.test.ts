import t from 'tap';
import { checkInviteAs, checkInvitees, checkOldEnoughToInvite, mayInvite, parseInviteeEmails } from '../../../src/domain/invites/decider.js';
import { decideReorderProfileFields } from '../../../src/domain/profile-fields/decider.js';
import { channelEmailSlug } from '../../../src/services/channel-email.js';
import { Role } from '../../../src/domain/roles.js';

const member = { role: Role.MEMBER, is_full_member: false };

t.test('who may invite, by invite_to_realm_policy', async (t) => {
  t.ok(mayInvite(1, member));
  t.notOk(mayInvite(1, { role: Role.GUEST, is_full_member: true }), 'guests never');
  t.notOk(mayInvite(2, member));
  t.ok(mayInvite(2, { role: Role.ADMINISTRATOR, is_full_member: true }));
  t.notOk(mayInvite(3, member));
  t.ok(mayInvite(3, { role: Role.MEMBER, is_full_member: true }));
  t.ok(mayInvite(4, { role: Role.MODERATOR, is_full_member: false }));
  t.notOk(mayInvite(6, { role: Role.OWNER, is_full_member: true }), 'nobody');
});

t.test('invite_as no looser than the inviter', async (t) => {
  t.throws(() => checkInviteAs(Role.OWNER, { role: Role.ADMINISTRATOR, is_full_member: true }), { message: 'Must be an organization owner' });
  t.throws(() => checkInviteAs(Role.ADMINISTRATOR, { role: Role.MODERATOR, is_full_member: true }), { message: 'Must be an organization administrator' });
  // As the real server's check_role_based_permissions: moderators are invited by administrators only.
  t.throws(() => checkInviteAs(Role.MODERATOR, member), { message: 'Must be an organization administrator' });
  t.throws(() => checkInviteAs(Role.MODERATOR, { role: Role.MODERATOR, is_full_member: true }), { message: 'Must be an organization administrator' });
  t.doesNotThrow(() => checkInviteAs(Role.MODERATOR, { role: Role.ADMINISTRATOR, is_full_member: true }));
  t.doesNotThrow(() => checkInviteAs(Role.GUEST, member));
  t.doesNotThrow(() => checkInviteAs(Role.OWNER, { role: Role.OWNER, is_full_member: true }));
});

t.test('a new account in an open organization may not invite', async (t) => {
  const day = 24 * 3600;
  const now = 100 * day;
  t.doesNotThrow(() => checkOldEnoughToInvite(true, member, now - 60, now), 'invitations required: no age rule');
  t.throws(() => checkOldEnoughToInvite(false, member, now - 2 * day, now), { message: /^Your account is too new to send invites for this organization\./, code: 'INVITATION_FAILED' });
  t.doesNotThrow(() => checkOldEnoughToInvite(false, member, now - 3 * day, now));
  t.doesNotThrow(() => checkOldEnoughToInvite(false, { role: Role.ADMINISTRATOR }, now - 60, now), 'administrators may');
});

t.test('invitee addresses', async (t) => {
  t.same(parseInviteeEmails(' a@example.com,\nB@example.com , ,b@example.com\na@example.com'), ['a@example.com', 'B@example.com', 'b@example.com'], 'each string once, as typed');
  t.same(parseInviteeEmails('Ann Example <ann@example.com>, <bo@example.com>'), ['ann@example.com', 'bo@example.com'], '"Name <address>" gives the address');
  t.same(checkInvitees([], new Map()), { invite: [], skipped: [] }, 'only blank addresses: nothing to send, and no error (as the real server)');
  const existing = new Map([['old@example.com', { is_active: true }], ['gone@example.com', { is_active: false }]]);
  t.same(checkInvitees(['new@example.com', 'Old@example.com', 'gone@example.com'], existing), {
    invite: ['new@example.com'],
    skipped: [['Old@example.com', 'Already has an account.', false], ['gone@example.com', 'Account has been deactivated.', true]],
  });
  t.throws(() => checkInvitees(['old@example.com'], existing), { message: "We weren't able to invite anyone." });
  t.throws(() => checkInvitees(['new@example.com', 'nope'], existing), { message: "Some emails did not validate, so we didn't send any invitations." });
  // The refusal lists the invalid addresses, then those already in the organization.
  t.throws(() => checkInvitees(['old@example.com', 'nope', 'new@example.com'], existing), {
    message: "Some emails did not validate, so we didn't send any invitations.",
    extra: { errors: [['nope', 'Invalid address.', false], ['old@example.com', 'Already has an account.', false]], sent_invitations: false },
  });
});

t.test('profile field order', async (t) => {
  const field = (id: number, order: number) => ({ id, type: 1, order, name: `f${id}`, hint: '', field_data: '', display_in_profile_summary: false });
  const [event] = decideReorderProfileFields(1, [3, 1, 3, 2], [field(1, 1), field(2, 2), field(3, 3)]);
  t.same(event!.data.fields.map((f) => [f.id, f.order]), [[1, 1], [3, 2], [2, 3]], 'a repeated id takes its last position');
  t.throws(() => decideReorderProfileFields(1, [1, 2], [field(1, 1), field(2, 2), field(3, 3)]), { message: 'Invalid order mapping.' });
});

t.test('channel email slugs', async (t) => {
  t.equal(channelEmailSlug('Team Chat: Q&A_2'), 'team-chat-q-a_2');
  t.equal(channelEmailSlug('--Über  ünd--'), 'über-ünd');
  t.equal(channelEmailSlug('!!!'), '');
});
