import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { verifyAction } from '../helpers/verify-action.js';

const TYPES = ['subscription', 'stream', 'default_streams', 'user_topic'];
const plain = { event_types: TYPES, fetch_event_types: TYPES };
const withSubscribers = { ...plain, include_subscribers: true };

async function idOf(s: TestServer, name: string): Promise<number> {
  return (await s.api('GET', '/get_stream_id', s.owner, { stream: name })).body.stream_id;
}

function subscribeAs(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}) {
  return async () => {
    const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  };
}

async function setRealm(s: TestServer, props: Record<string, unknown>) {
  await setRealmProperties(s, props);
}

t.test('channel creation and subscriptions keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');
  // Everyone starts with one subscription, so include_subscribers shows in their state.
  await subscribeAs(s, s.owner, 'lobby', { principals: [member.id, other.id, admin.id, guest.id] })();

  for (const register of [plain, withSubscribers]) {
    const suffix = register === plain ? 'a' : 'b';
    // The creator: stream create, then their subscription.
    const created = await verifyAction(t, s, member, subscribeAs(s, member, `public-${suffix}`), { register });
    t.match(created, [
      { type: 'stream', op: 'create', streams: [{ name: `public-${suffix}`, creator_id: member.id }] },
      { type: 'subscription', op: 'add', subscriptions: [{ name: `public-${suffix}`, color: String }] },
    ]);
    // Another member sees the new channel and its first subscriber.
    await verifyAction(t, s, other, subscribeAs(s, member, `public2-${suffix}`), {
      register,
      expect: (events) => {
        t.match(events[0], { type: 'stream', op: 'create' });
        if (register === withSubscribers) t.match(events[1], { type: 'subscription', op: 'peer_add', user_ids: [member.id] });
      },
    });
    // A guest hears nothing of a public channel.
    await verifyAction(t, s, guest, subscribeAs(s, member, `public3-${suffix}`), {
      register,
      expect: (events) => t.same(events, []),
    });
    // A private channel: an administrator sees it appear, others do not.
    await verifyAction(t, s, admin, subscribeAs(s, member, `private-${suffix}`, { invite_only: true }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'create', streams: [{ invite_only: true }] }]),
    });
    await verifyAction(t, s, other, subscribeAs(s, member, `private2-${suffix}`, { invite_only: true }), {
      register,
      expect: (events) => t.same(events, []),
    });
    // Being added to a private channel: stream create, then the subscription.
    await verifyAction(t, s, other, subscribeAs(s, member, `private-${suffix}`, { principals: [other.id] }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'create' }, { type: 'subscription', op: 'add' }]),
    });
    // Others in the channel get peer_add.
    await verifyAction(t, s, member, subscribeAs(s, other, `public-${suffix}`), { register });
    // Leaving: remove for oneself, peer_remove for the others.
    await verifyAction(t, s, member, () => s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: [`public-${suffix}`] }), { register });
    await verifyAction(t, s, other, () => s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: [`public2-${suffix}`] }), { register });
    // Leaving a private channel loses sight of it.
    await verifyAction(t, s, other, () => s.api('DELETE', '/users/me/subscriptions', other, { subscriptions: [`private-${suffix}`] }), {
      register,
      expect: (events) => t.match(events, [{ type: 'subscription', op: 'remove' }, { type: 'stream', op: 'delete' }]),
    });
    // Coming back to a public channel one left.
    await verifyAction(t, s, other, subscribeAs(s, other, `public2-${suffix}`), { register });
    // A deactivated subscriber leaves every subscriber list; reactivated, they come back.
    await verifyAction(t, s, member, () => s.api('DELETE', `/users/${other.id}`, s.owner), {
      register,
      expect: (events) => t.ok(events.some((e) => e.type === 'subscription' && e.op === 'peer_remove' && e.user_ids[0] === other.id)),
    });
    await verifyAction(t, s, member, () => s.api('POST', `/users/${other.id}/reactivate`, s.owner), { register });
    // A guest subscribed by a member learns of the channel, then of its subscription.
    await verifyAction(t, s, guest, subscribeAs(s, member, `public3-${suffix}`, { principals: [guest.id] }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'create' }, { type: 'subscription', op: 'add' }]),
    });
  }
});

t.test('channel updates keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  await setRealm(s, { enable_spectator_access: true });
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const guest = await s.user(Role.GUEST, 'Guest');
  await subscribeAs(s, admin, 'room', { principals: [admin.id, member.id] })();
  await subscribeAs(s, s.owner, 'lobby', { principals: [outsider.id, guest.id, s.owner.id] })();
  const id = await idOf(s, 'room');
  const patch = (params: Record<string, unknown>, as: TestUser = admin) => () => s.api('PATCH', `/streams/${id}`, as, params);

  for (const register of [plain, withSubscribers]) {
    for (const viewer of [member, outsider, admin]) {
      await verifyAction(t, s, viewer, patch({ description: `about **${viewer.id}**` }), {
        register,
        expect: (events) => t.match(events, [{ type: 'stream', op: 'update', stream_id: id, property: 'description', rendered_description: /<strong>/ }]),
      });
    }
    await verifyAction(t, s, member, patch({ new_name: `room-${register === plain ? 1 : 2}` }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'update', property: 'name', value: `room-${register === plain ? 1 : 2}` }]),
    });
    await verifyAction(t, s, outsider, patch({ stream_post_policy: register === plain ? 2 : 4 }), {
      register,
      expect: (events) => t.match(events, [
        { type: 'stream', op: 'update', property: 'stream_post_policy' },
        { type: 'stream', op: 'update', property: 'is_announcement_only' },
      ]),
    });
    await verifyAction(t, s, member, patch({ message_retention_days: register === plain ? 7 : 'unlimited' }, s.owner), { register });
    const group = await s.platform.db.selectFrom('user_groups').select('id').where('name', '=', register === plain ? 'role:members' : 'role:moderators').executeTakeFirstOrThrow();
    await verifyAction(t, s, member, patch({ can_remove_subscribers_group: group.id }), { register });

    // Privacy: the outsider loses the channel, subscribers and administrators see an update.
    await verifyAction(t, s, outsider, patch({ is_private: true }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'delete', stream_ids: [id] }]),
    });
    await verifyAction(t, s, member, patch({ history_public_to_subscribers: true }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'update', property: 'history_public_to_subscribers', value: true }]),
    });
    await verifyAction(t, s, member, patch({ is_private: false }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'update', property: 'invite_only', value: false, history_public_to_subscribers: true, is_web_public: false }]),
    });
    await verifyAction(t, s, outsider, patch({ is_private: true, history_public_to_subscribers: false }), { register });
    await verifyAction(t, s, outsider, patch({ is_private: false }), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'create', streams: [{ stream_id: id, invite_only: false }] }]),
    });
    // Web-public: a guest gains sight of it, and loses it again.
    await verifyAction(t, s, guest, patch({ is_web_public: true }, s.owner), {
      register,
      expect: (events) => t.match(events, [{ type: 'stream', op: 'create', streams: [{ is_web_public: true }] }]),
    });
    await verifyAction(t, s, member, patch({ is_web_public: false }, s.owner), { register });
    await verifyAction(t, s, guest, patch({ is_web_public: false }, s.owner), { register });

    // Default channels: one event with the whole list; guests get none.
    for (const viewer of [member, guest]) {
      await verifyAction(t, s, viewer, patch({ is_default_stream: true }), {
        register,
        expect: (events) => t.same(events.map((e) => e.type), viewer === guest ? [] : ['default_streams']),
      });
      await verifyAction(t, s, viewer, patch({ is_default_stream: false }), { register });
    }
    await verifyAction(t, s, outsider, subscribeAs(s, admin, `default-${register === plain ? 1 : 2}`, { is_default_stream: true }), {
      register,
      // The outsider may see who is in a public channel: peer_add for its creator.
      expect: (events) => t.same(events.map((e) => e.type), ['stream', 'default_streams', 'subscription']),
    });
  }

  // Subscription properties (in_home_view travels with is_muted).
  for (const [property, value] of [['color', '#abcdef'], ['is_muted', true], ['in_home_view', true], ['pin_to_top', true], ['desktop_notifications', false], ['email_notifications', true]] as const) {
    await verifyAction(t, s, member, () => s.api('POST', '/users/me/subscriptions/properties', member, { subscription_data: [{ stream_id: id, property, value }] }), {
      register: plain,
      expect: (events) => t.ok(events.every((e) => e.type === 'subscription' && e.op === 'update' && e.stream_id === id)),
    });
  }

  // Topic visibility.
  for (const [topic, policy] of [['Lunch', 1], ['lunch', 2], ['LUNCH', 3], ['Lunch', 0]] as const) {
    await verifyAction(t, s, member, () => s.api('POST', '/user_topics', member, { stream_id: id, topic, visibility_policy: policy }), {
      register: plain,
      expect: (events) => t.match(events, [{ type: 'user_topic', stream_id: id, topic_name: topic, visibility_policy: policy, last_updated: Number }]),
    });
  }

  // first_message_id is kept by the messages area through StreamPropertyChanged.
  await verifyAction(t, s, outsider, async () => {
    const meta = { actor_id: admin.id, realm_id: 1, client: 'test', request_id: 'first-message', time: new Date().toISOString() };
    await s.platform.commands.run(meta, async () => ({
      appends: [{ streamId: `channel-${id}`, expectedVersion: undefined, events: [{ type: 'StreamPropertyChanged', data: { stream_id: id, property: 'first_message_id', value: 42 } }] }],
      result: undefined,
    }));
  }, {
    register: withSubscribers,
    expect: (events) => t.match(events, [{ type: 'stream', op: 'update', stream_id: id, property: 'first_message_id', value: 42 }]),
  });

  // Archiving: everyone who could see it gets a delete (and the default list changes).
  await s.api('PATCH', `/streams/${id}`, admin, { is_default_stream: true });
  await verifyAction(t, s, member, () => s.api('DELETE', `/streams/${id}`, admin), {
    register: withSubscribers,
    expect: (events) => t.match(events, [{ type: 'stream', op: 'delete', stream_ids: [id] }, { type: 'default_streams' }]),
  });
  const lobby = await idOf(s, 'lobby');
  await verifyAction(t, s, outsider, () => s.api('DELETE', `/streams/${lobby}`, admin), { register: plain });
});
