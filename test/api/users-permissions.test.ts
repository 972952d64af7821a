import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { setRealmProperties } from '../helpers/realm.js';

const register = { event_types: ['realm', 'realm_user'], fetch_event_types: ['realm', 'realm_user'] };
const pick = (body: Record<string, unknown>) => ({
  can_create_streams: body.can_create_streams,
  can_create_public_streams: body.can_create_public_streams,
  can_create_private_streams: body.can_create_private_streams,
  can_create_web_public_streams: body.can_create_web_public_streams,
  can_subscribe_other_users: body.can_subscribe_other_users,
  can_invite_others_to_realm: body.can_invite_others_to_realm,
});

t.test('register: can_* fields follow the realm policies and the role', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const moderator = await s.user(Role.MODERATOR, 'Moderator');
  const guest = await s.user(Role.GUEST, 'Guest');
  const fetch = async (u: typeof member) => pick((await s.api('POST', '/register', u, { fetch_event_types: ['realm_user'] })).body);

  t.same(await fetch(member), {
    can_create_streams: true, can_create_public_streams: true, can_create_private_streams: true,
    can_create_web_public_streams: false, can_subscribe_other_users: true, can_invite_others_to_realm: true,
  }, 'defaults: members may');
  t.same(await fetch(guest), {
    can_create_streams: false, can_create_public_streams: false, can_create_private_streams: false,
    can_create_web_public_streams: false, can_subscribe_other_users: false, can_invite_others_to_realm: false,
  }, 'guests may not');

  await setRealmProperties(s, { create_public_stream_policy: 2, create_private_stream_policy: 4, invite_to_stream_policy: 4, invite_to_realm_policy: 6 });
  t.same(await fetch(member), {
    can_create_streams: false, can_create_public_streams: false, can_create_private_streams: false,
    can_create_web_public_streams: false, can_subscribe_other_users: false, can_invite_others_to_realm: false,
  }, 'admins/moderators-only policies exclude members');
  t.same(await fetch(moderator), {
    can_create_streams: true, can_create_public_streams: false, can_create_private_streams: true,
    can_create_web_public_streams: false, can_subscribe_other_users: true, can_invite_others_to_realm: false,
  }, 'moderators pass the moderators policies only');
  t.match(await fetch(s.owner), { can_create_public_streams: true, can_invite_others_to_realm: false }, 'nobody means nobody');

  // Full members only, with a waiting period the new account has not served.
  await setRealmProperties(s, { create_public_stream_policy: 3, waiting_period_threshold: 10 });
  t.equal((await fetch(member)).can_create_public_streams, false, 'a new member is not a full member');
  t.equal((await fetch(moderator)).can_create_public_streams, true, 'moderators count as full members');

  // The fields agree with what the server enforces.
  const created = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: JSON.stringify([{ name: 'new one' }]) });
  t.equal(created.status, 400, 'creation refused like can_create_public_streams says');
});

t.test('register-apply-compare: policy and role changes recompute can_* fields', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const before = pick((await s.api('POST', '/register', member, register)).body);

  const events = await verifyAction(t, s, member, () => setRealmProperties(s, { create_private_stream_policy: 2, invite_to_realm_policy: 4 }), { register });
  t.match(events, [{ type: 'realm' }]);
  const after = pick((await s.api('POST', '/register', member, register)).body);
  t.not(after.can_create_private_streams, before.can_create_private_streams, 'the policy change changed the state');

  await verifyAction(t, s, member, () => s.api('PATCH', `/users/${member.id}`, s.owner, { role: Role.MODERATOR }), { register });
  t.equal((await s.api('POST', '/register', member, register)).body.can_invite_others_to_realm, true, 'promotion changed the state');
  await verifyAction(t, s, member, () => s.api('PATCH', `/users/${member.id}`, s.owner, { role: Role.GUEST }), { register });
  await verifyAction(t, s, member, () => setRealmProperties(s, { create_private_stream_policy: 1 }), { register });
  await verifyAction(t, s, member, () => s.api('PATCH', `/users/${member.id}`, s.owner, { role: Role.ADMINISTRATOR }), { register });
});
