import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';

async function create(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
  if (res.status !== 200) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

async function setRealm(s: TestServer, props: Record<string, unknown>) {
  await setRealmProperties(s, props);
}

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

  // Guests may not call POST /users/me/subscriptions at all: `guestDenied` is what they are told instead.
  type Mutation = { name: string; allowed: readonly string[]; denied: string; guestDenied?: string; run: (as: TestUser) => Promise<{ status: number; body: any }> };
  const mutations: Mutation[] = [
    { name: 'create a public channel', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      guestDenied: 'Not allowed for guest users',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `pub-${++n}` }] }) },
    { name: 'create a private channel', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      guestDenied: 'Not allowed for guest users',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `priv-${++n}` }], invite_only: true }) },
    { name: 'create a web-public channel', allowed: ['owner'], denied: 'Insufficient permission',
      guestDenied: 'Not allowed for guest users',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `web-${++n}` }], is_web_public: true }) },
    { name: 'create a default channel', allowed: ['owner', 'administrator'], denied: 'Insufficient permission',
      guestDenied: 'Not allowed for guest users',
      run: async (as) => s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name: `def-${++n}` }], is_default_stream: true }) },
    { name: 'subscribe someone else', allowed: ['owner', 'administrator', 'moderator', 'member', 'bot'], denied: 'Insufficient permission',
      guestDenied: 'Not allowed for guest users',
      run: async (as) => {
        const { name } = await fresh({}, [as]);
        return s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], principals: [target.id] });
      } },
    { name: 'unsubscribe someone else', allowed: ['owner', 'administrator'], denied: 'Insufficient permission',
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
        t.match(res.body.msg, role === 'guest' && m.guestDenied ? m.guestDenied : m.denied, `${m.name}: ${role} is told why`);
      }
    }
  }
});
