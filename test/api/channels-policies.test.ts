import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { defaultStreamSubscriptions } from '../../src/services/channels.js';

async function create(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
  if (res.status !== 200) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

async function setRealm(s: TestServer, props: Record<string, unknown>) {
  await setRealmProperties(s, props);
}

t.test('out-of-range ids are errors, never server failures', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const huge = 99999999999999;
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['GET', `/streams/${huge}`, {}, 'Invalid channel ID'],
    ['PATCH', `/streams/${huge}`, { description: 'x' }, 'Invalid channel ID'],
    ['DELETE', `/streams/${huge}`, {}, 'Invalid channel ID'],
    ['GET', `/streams/${huge}/members`, {}, 'Invalid channel ID'],
    ['GET', `/users/me/${huge}/topics`, {}, 'Invalid channel ID'],
    ['POST', '/user_topics', { stream_id: huge, topic: 'x', visibility_policy: 1 }, 'Invalid channel ID'],
    ['POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: huge, property: 'color', value: '#aaaaaa' }] }, 'Invalid channel ID'],
    ['POST', '/users/me/subscriptions', { subscriptions: [{ name: 'x' }], principals: [huge] }, 'No such user'],
    ['POST', '/users/me/subscriptions', { subscriptions: [{ name: 'x' }], can_remove_subscribers_group: huge }, 'Invalid user group'],
    ['GET', `/users/${huge}/subscriptions/1`, {}, 'No such user'],
    ['PATCH', `/streams/1`, { message_retention_days: huge }, ''],
  ];
  for (const [method, path, params, msg] of cases) {
    const res = await s.api(method, path, method === 'PATCH' && path === '/streams/1' ? s.owner : member, params);
    t.equal(res.status, 400, `${method} ${path}`);
    if (msg) t.equal(res.body.msg, msg, `${method} ${path}`);
  }
  await create(s, s.owner, 'kept');
  const id = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'kept' })).body.stream_id;
  const retention = await s.api('PATCH', `/streams/${id}`, s.owner, { message_retention_days: huge });
  t.equal(retention.body.msg, `Bad value for 'message_retention_days': ${huge}`);
});

t.test('web-public channels', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  await setRealm(s, { enable_spectator_access: true });
  const guest = await s.user(Role.GUEST, 'Guest');
  const member = await s.user(Role.MEMBER, 'Member');
  const id = await create(s, s.owner, 'open-to-all', { is_web_public: true });
  t.equal((await s.api('GET', `/streams/${id}`, guest)).body.stream.is_web_public, true, 'guests see web-public channels');
  t.same((await s.api('GET', '/streams', member, { include_public: false, include_subscribed: false, include_web_public: true })).body.streams.map((x: any) => x.stream_id), [id]);
  t.same((await s.api('GET', '/streams', guest, { include_web_public: true })).body.streams.map((x: any) => x.stream_id), [id]);
  t.same((await s.api('GET', `/streams/${id}/members`, guest)).body.subscribers, [s.owner.id]);
  // Guests do not subscribe themselves, not even to a web-public channel; someone adds them.
  const join = await s.api('POST', '/users/me/subscriptions', guest, { subscriptions: [{ name: 'open-to-all' }] });
  t.equal(join.body.msg, 'Not allowed for guest users');
  const added = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'open-to-all' }], principals: [guest.id] });
  t.same(added.body.subscribed, { [guest.email]: ['open-to-all'] });
  const bad = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'both' }], is_web_public: true, invite_only: true });
  t.equal(bad.body.msg, 'Invalid parameters');
});

t.test('new accounts join the default channels', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const first = await create(s, admin, 'welcome', { is_default_stream: true });
  const second = await create(s, admin, 'announcements', { is_default_stream: true });
  await create(s, admin, 'other');
  const fresh = await s.user(Role.MEMBER, 'Fresh');
  const appends = await defaultStreamSubscriptions(s.platform.db, 1, fresh.id);
  t.same(appends.map((a) => a.streamId).sort(), [`subscription-${first}-${fresh.id}`, `subscription-${second}-${fresh.id}`].sort());
  // createUser appends these subscriptions in the same command as the account.
  const subs = await s.api('GET', '/users/me/subscriptions', fresh);
  t.same(subs.body.subscriptions.map((x: any) => x.name).sort(), ['announcements', 'welcome']);
  t.not(subs.body.subscriptions[0].color, subs.body.subscriptions[1].color, 'distinct colours');
});

t.test('organization policies for creating channels and adding subscribers', async (t) => {
  const s = await startTestServer(t);
  const moderator = await s.user(Role.MODERATOR, 'Moderator');
  const member = await s.user(Role.MEMBER, 'Member');
  const target = await s.user(Role.MEMBER, 'Target');
  let n = 0;
  const tryCreate = async (as: TestUser, extra: Record<string, unknown> = {}) =>
    (await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `p${++n}` }], ...extra })).body.msg;

  await setRealm(s, { create_public_stream_policy: 4, create_private_stream_policy: 2 });
  t.equal(await tryCreate(member), 'Insufficient permission', 'moderators only');
  t.equal(await tryCreate(moderator), '');
  t.equal(await tryCreate(moderator, { invite_only: true }), 'Insufficient permission', 'administrators only');
  t.equal(await tryCreate(s.owner, { invite_only: true }), '');

  // Full members: accounts older than the waiting period.
  await setRealm(s, { create_public_stream_policy: 3, waiting_period_threshold: 10 });
  t.equal(await tryCreate(member), 'Insufficient permission', 'a new account is not a full member');
  t.equal(await tryCreate(moderator), '');
  // The same account passes once the waiting period no longer exceeds its age.
  await setRealm(s, { waiting_period_threshold: 0 });
  t.equal(await tryCreate(member), '', 'an account as old as the waiting period is a full member');

  await setRealm(s, { create_public_stream_policy: 1, invite_to_stream_policy: 2 });
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'shared' }] });
  const add = await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'shared' }], principals: [target.id] });
  t.equal(add.body.msg, 'Insufficient permission');
  const self = await s.api('POST', '/users/me/subscriptions', target, { subscriptions: [{ name: 'shared' }], principals: [target.id] });
  t.equal(self.status, 200, 'naming oneself is not adding someone else');
});
