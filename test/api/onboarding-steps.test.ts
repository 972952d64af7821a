import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const ALL = ['visibility_policy_banner', 'intro_inbox_view_modal', 'intro_recent_view_modal', 'first_stream_created_banner', 'jump_to_conversation_banner'];

t.test('POST /users/me/onboarding_steps dismisses a one-time notice, live and in register', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { fetch_event_types: ['onboarding_steps'], event_types: ['onboarding_steps'] };

  const fresh = await s.api('POST', '/register', alice, register);
  t.same(fresh.body.onboarding_steps.map((s: any) => s.name), ALL, 'a new user has every notice to see');
  t.ok(fresh.body.onboarding_steps.every((s: any) => s.type === 'one_time_notice'));

  const events = await verifyAction(t, s, alice, () => s.api('POST', '/users/me/onboarding_steps', alice, { onboarding_step: 'intro_inbox_view_modal' }), { register });
  t.equal(events.length, 1);
  t.same(events[0].onboarding_steps.map((s: any) => s.name), ALL.filter((n) => n !== 'intro_inbox_view_modal'));

  // Marking it again is accepted and announced again, as the real server does.
  const again = await verifyAction(t, s, alice, () => s.api('POST', '/users/me/onboarding_steps', alice, { onboarding_step: 'intro_inbox_view_modal' }), { register });
  t.equal(again.length, 1);

  // Nobody else hears of it or changes.
  const others = await verifyAction(t, s, bob, () => s.api('POST', '/users/me/onboarding_steps', alice, { onboarding_step: 'visibility_policy_banner' }), { register });
  t.same(others, []);
  const bobState = await s.api('POST', '/register', bob, register);
  t.equal(bobState.body.onboarding_steps.length, ALL.length);
  const aliceState = await s.api('POST', '/register', alice, register);
  t.same(aliceState.body.onboarding_steps.map((s: any) => s.name), ['intro_recent_view_modal', 'first_stream_created_banner', 'jump_to_conversation_banner']);
});

t.test('bad onboarding steps and bots are refused as on the real server', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const unknown = await s.api('POST', '/users/me/onboarding_steps', alice, { onboarding_step: 'intro_streams' });
  t.equal(unknown.status, 400);
  t.same(unknown.body, { result: 'error', msg: 'Unknown onboarding_step: intro_streams', code: 'BAD_REQUEST' });
  const missing = await s.api('POST', '/users/me/onboarding_steps', alice, {});
  t.equal(missing.status, 400);
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  const bot = await s.user(Role.MEMBER, 'Helper', { bot_type: 1, bot_owner_id: alice.id });
  const byBot = await s.api('POST', '/users/me/onboarding_steps', bot, { onboarding_step: 'intro_inbox_view_modal' });
  t.equal(byBot.status, 400);
  t.equal(byBot.body.msg, 'This endpoint does not accept bot requests.');
});
