import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { defaultStreamSubscriptions } from '../../src/services/channels.js';

async function create(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
  if (res.status !== 200) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

async function setRealm(s: TestServer, props: Record<string, unknown>) {
  const realm = await s.platform.db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
  await s.platform.db.updateTable('realms').set({ properties: JSON.stringify({ ...realm.properties, ...props }) }).where('id', '=', realm.id).execute();
}

async function groupId(s: TestServer, name: string): Promise<number> {
  return (await s.platform.db.selectFrom('user_groups').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;
}

t.test('PATCH /streams/{stream_id}: properties and rules', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const id = await create(s, admin, 'general');
  const get = async () => (await s.api('GET', `/streams/${id}`, admin)).body.stream;
  const patch = (params: Record<string, unknown>, as: TestUser = admin) => s.api('PATCH', `/streams/${id}`, as, params);

  t.equal((await patch({ description: 'Line one\nline **two**' })).status, 200);
  t.match(await get(), { description: 'Line one line **two**', rendered_description: '<p>Line one line <strong>two</strong></p>' });
  t.equal((await patch({ description: 'x'.repeat(1025) })).body.msg, 'description is too long (limit: 1024 characters)');

  t.equal((await patch({ new_name: 'renamed' })).status, 200);
  t.equal((await get()).name, 'renamed');
  t.equal((await patch({ new_name: 'renamed' })).body.msg, 'Channel already has that name!');
  t.equal((await patch({ new_name: 'Renamed' })).status, 200, 'changing only the case is allowed');
  await create(s, admin, 'taken');
  t.equal((await patch({ new_name: 'TAKEN' })).body.msg, "Channel 'TAKEN' already exists");
  t.equal((await patch({ new_name: 'y'.repeat(61) })).body.msg, 'Channel name too long (limit: 60 characters).');
  t.equal((await patch({ new_name: '  ' })).body.msg, "Channel name can't be empty.");

  t.equal((await patch({ stream_post_policy: 2 })).status, 200);
  t.match(await get(), { stream_post_policy: 2, is_announcement_only: true });
  t.equal((await patch({ is_announcement_only: false })).status, 200);
  t.match(await get(), { stream_post_policy: 1, is_announcement_only: false });
  t.equal((await patch({ stream_post_policy: 9 })).status, 400);

  // message_retention_days: owners only; integer, realm_default or unlimited.
  t.equal((await patch({ message_retention_days: 30 })).body.msg, 'Must be an organization owner');
  t.equal((await patch({ message_retention_days: 30 }, s.owner)).status, 200);
  t.equal((await get()).message_retention_days, 30);
  await patch({ message_retention_days: 'unlimited' }, s.owner);
  t.equal((await get()).message_retention_days, -1);
  await patch({ message_retention_days: 'realm_default' }, s.owner);
  t.equal((await get()).message_retention_days, null);
  t.equal((await patch({ message_retention_days: 0 }, s.owner)).body.msg, "Bad value for 'message_retention_days': 0");
  t.equal((await patch({ message_retention_days: 'forever-ish' }, s.owner)).status, 400);

  // can_remove_subscribers_group: system groups except role:internet and role:owners.
  const moderators = await groupId(s, 'role:moderators');
  t.equal((await patch({ can_remove_subscribers_group: moderators })).status, 200);
  t.equal((await get()).can_remove_subscribers_group, moderators);
  for (const name of ['role:internet', 'role:owners']) {
    const res = await patch({ can_remove_subscribers_group: await groupId(s, name) });
    t.equal(res.status, 400, name);
    t.equal(res.body.msg, `'can_remove_subscribers_group' setting cannot be set to '${name}' group.`);
  }
  t.equal((await patch({ can_remove_subscribers_group: 987654 })).body.msg, 'Invalid user group');

  // Permission combinations.
  t.equal((await patch({ history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
  t.equal((await patch({ is_private: false, history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
  t.equal((await patch({ is_private: true })).status, 200);
  t.match(await get(), { invite_only: true, history_public_to_subscribers: false });
  t.equal((await patch({ history_public_to_subscribers: true })).status, 200);
  t.match(await get(), { invite_only: true, history_public_to_subscribers: true });
  t.equal((await patch({ is_private: false })).status, 200);
  t.match(await get(), { invite_only: false, history_public_to_subscribers: true });

  // Web-public needs the realm's spectator access and the creation policy.
  t.equal((await patch({ is_web_public: true })).body.msg, 'Web-public channels are not enabled.');
  await setRealm(s, { enable_spectator_access: true });
  t.equal((await patch({ is_web_public: true })).body.msg, 'Insufficient permission', 'default policy: owners only');
  t.equal((await patch({ is_web_public: true }, s.owner)).status, 200);
  t.equal((await get()).is_web_public, true);
  t.equal((await patch({ is_private: true }, s.owner)).body.msg, 'Invalid parameters', 'web-public cannot be private');
  t.equal((await patch({ is_web_public: false, is_private: true }, s.owner)).status, 200);
  t.match(await get(), { is_web_public: false, invite_only: true });
  await patch({ is_private: false });

  // Default channels.
  t.equal((await patch({ is_default_stream: true })).status, 200);
  const defaults = await s.api('GET', '/streams', admin, { include_default: true, include_public: false, include_subscribed: false });
  t.same(defaults.body.streams.map((x: any) => x.stream_id), [id]);
  t.equal((await patch({ is_private: true, is_default_stream: true })).body.msg, 'A default channel cannot be private.');

  // Unknown channel.
  const missing = await s.api('PATCH', '/streams/999999', admin, { description: 'x' });
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, 'Invalid channel ID');
  t.equal((await s.api('PATCH', '/streams/abc', admin, { description: 'x' })).status, 400);
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
  const join = await s.api('POST', '/users/me/subscriptions', guest, { subscriptions: [{ name: 'open-to-all' }] });
  t.same(join.body.subscribed, { [guest.email]: ['open-to-all'] }, 'a guest may join a web-public channel');
  const bad = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'both' }], is_web_public: true, invite_only: true });
  t.equal(bad.body.msg, 'Invalid parameters');
});

t.test('administrators and private channels', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const id = await create(s, member, 'private', { invite_only: true });
  const patch = (params: Record<string, unknown>, as: TestUser = admin) => s.api('PATCH', `/streams/${id}`, as, params);
  // Name and description: any administrator.
  t.equal((await patch({ description: 'by admin' })).status, 200);
  // Permissions: only a subscribed administrator.
  t.equal((await patch({ is_private: false })).body.msg, 'Invalid channel ID');
  t.equal((await patch({ can_remove_subscribers_group: await groupId(s, 'role:members') })).body.msg, 'Invalid channel ID');
  // Non-administrators: subscribers are told they need to be one, others learn nothing.
  const sub = await patch({ description: 'x' }, member);
  t.equal(sub.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal(sub.body.msg, 'Must be an organization administrator');
  t.equal((await patch({ description: 'x' }, outsider)).body.msg, 'Invalid channel ID');
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'private' }], principals: [admin.id] });
  t.equal((await patch({ is_private: false })).status, 200);
});

t.test('archiving', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const id = await create(s, member, 'old', { is_default_stream: undefined });
  t.equal((await s.api('DELETE', `/streams/${id}`, member)).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('DELETE', `/streams/${id}`, admin)).status, 200);
  t.equal((await s.api('GET', `/streams/${id}`, member)).body.msg, 'Invalid channel ID');
  t.equal((await s.api('DELETE', `/streams/${id}`, admin)).body.msg, 'Invalid channel ID');
  t.same((await s.api('GET', '/users/me/subscriptions', member)).body.subscriptions, []);
  t.equal((await s.api('PATCH', `/streams/${id}`, admin, { description: 'x' })).body.msg, 'Invalid channel ID');
  // The name is free again.
  const again = await create(s, member, 'old');
  t.not(again, id);
  t.equal((await s.api('DELETE', '/streams/999999', admin)).body.msg, 'Invalid channel ID');
});

t.test('removing other subscribers', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: member.id });
  const id = await create(s, member, 'room', { principals: [member.id, other.id, bot.id] });
  const remove = (as: TestUser, who: TestUser) => s.api('DELETE', '/users/me/subscriptions', as, { subscriptions: ['room'], principals: [who.id] });
  t.equal((await remove(member, other)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.same((await remove(member, bot)).body.removed, ['room'], 'own bot');
  // Members of can_remove_subscribers_group may remove others.
  await s.api('PATCH', `/streams/${id}`, admin, { can_remove_subscribers_group: await groupId(s, 'role:members') });
  t.same((await remove(member, other)).body.removed, ['room']);
  t.same((await s.api('GET', `/streams/${id}/members`, admin)).body.subscribers, [member.id]);
  t.same((await remove(admin, member)).body.removed, ['room']);
});

/** One mutation per row, tried by every role: does the role succeed, and if not, with which message? */
t.test('permission matrix', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  await setRealm(s, { enable_spectator_access: true });
  const users: Record<string, TestUser> = {
    owner: s.owner,
    administrator: await s.user(Role.ADMINISTRATOR, 'Admin'),
    moderator: await s.user(Role.MODERATOR, 'Moderator'),
    member: await s.user(Role.MEMBER, 'Member'),
    guest: await s.user(Role.GUEST, 'Guest'),
  };
  users.bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: users.member!.id });
  const target = await s.user(Role.MEMBER, 'Target');
  const roles = ['owner', 'administrator', 'moderator', 'member', 'guest', 'bot'] as const;
  let n = 0;
  const fresh = async (extra: Record<string, unknown> = {}, members: TestUser[] = []) => {
    n += 1;
    const name = `m${n}`;
    return { name, id: await create(s, s.owner, name, { principals: [s.owner.id, ...members.map((u) => u.id)], ...extra }) };
  };

  type Mutation = { name: string; allowed: readonly string[]; denied: string; run: (as: TestUser) => Promise<{ status: number; body: any }> };
  const mutations: Mutation[] = [
    { name: 'create a public channel', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `pub-${++n}` }] }) },
    { name: 'create a private channel', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `priv-${++n}` }], invite_only: true }) },
    { name: 'create a web-public channel', allowed: ['owner'], denied: 'Insufficient permission',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `web-${++n}` }], is_web_public: true }) },
    { name: 'create a default channel', allowed: ['owner', 'administrator'], denied: 'Must be an organization administrator',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `def-${++n}` }], is_default_stream: true }) },
    { name: 'subscribe someone else', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      run: async (as) => {
        const { name } = await fresh({}, [as]);
        return s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], principals: [target.id] });
      } },
    { name: 'unsubscribe someone else', allowed: ['owner', 'administrator'], denied: 'Must be an organization administrator',
      run: async (as) => {
        const { name } = await fresh({}, [as, target]);
        return s.api('DELETE', '/users/me/subscriptions', as, { subscriptions: [name], principals: [target.id] });
      } },
    { name: 'edit a channel description', allowed: ['owner', 'administrator'], denied: 'Must be an organization administrator',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('PATCH', `/streams/${id}`, as, { description: 'new' });
      } },
    { name: 'make a channel private', allowed: ['owner', 'administrator'], denied: 'Must be an organization administrator',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('PATCH', `/streams/${id}`, as, { is_private: true });
      } },
    { name: 'change message retention', allowed: ['owner'], denied: 'Must be an organization',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('PATCH', `/streams/${id}`, as, { message_retention_days: 10 });
      } },
    { name: 'archive a channel', allowed: ['owner', 'administrator'], denied: 'Must be an organization administrator',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('DELETE', `/streams/${id}`, as);
      } },
    { name: 'own subscription properties', allowed: [...roles], denied: '',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('POST', '/users/me/subscriptions/properties', as, { subscription_data: [{ stream_id: id, property: 'pin_to_top', value: true }] });
      } },
    { name: 'topic visibility in a subscribed channel', allowed: [...roles], denied: '',
      run: async (as) => {
        const { id } = await fresh({}, [as]);
        return s.api('POST', '/user_topics', as, { stream_id: id, topic: 't', visibility_policy: 3 });
      } },
    { name: 'topic visibility in a public channel one is not in', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Invalid channel ID',
      run: async (as) => {
        const { id } = await fresh();
        return s.api('POST', '/user_topics', as, { stream_id: id, topic: 't', visibility_policy: 1 });
      } },
  ];

  for (const m of mutations) {
    for (const role of roles) {
      const res = await m.run(users[role]!);
      if (m.allowed.includes(role)) {
        t.equal(res.status, 200, `${m.name}: ${role} may (${JSON.stringify(res.body)})`);
      } else {
        t.equal(res.status, 400, `${m.name}: ${role} may not`);
        t.match(res.body.msg, m.denied, `${m.name}: ${role} is told why`);
      }
    }
  }
});

t.test('new accounts can be subscribed to the default channels', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const first = await create(s, admin, 'welcome', { is_default_stream: true });
  const second = await create(s, admin, 'announcements', { is_default_stream: true });
  await create(s, admin, 'other');
  const fresh = await s.user(Role.MEMBER, 'Fresh');
  const appends = await defaultStreamSubscriptions(s.platform.db, 1, fresh.id);
  t.same(appends.map((a) => a.streamId).sort(), [`subscription-${first}-${fresh.id}`, `subscription-${second}-${fresh.id}`].sort());
  const meta = { actor_id: admin.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  await s.platform.commands.run(meta, async () => ({ appends, result: undefined }));
  const subs = await s.api('GET', '/users/me/subscriptions', fresh);
  t.same(subs.body.subscriptions.map((x: any) => x.name).sort(), ['announcements', 'welcome']);
  t.not(subs.body.subscriptions[0].color, subs.body.subscriptions[1].color, 'distinct colours');
});
