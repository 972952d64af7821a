import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { verifyActionForEach } from '../helpers/verify-action.js';
import { EventQueueHub } from '../../src/event-queue/hub.js';
import type { QueueOptions, Recipient } from '../../src/event-queue/types.js';
import { getUserById } from '../../src/read/users.js';
import { getRealm } from '../../src/read/realm.js';

/**
 * One request's subscription changes reach each queue grouped as on the real server
 * (bulk_add_subscriptions / bulk_remove_subscriptions, send_peer_subscriber_events in
 * zerver/actions/streams.py): one `subscription` add / remove per changed user with all their
 * channels; peer events to the others, one per private channel, and for public channels one per set
 * of changed users (web-public ones apart; a channel with a guest subscriber on its own).
 */

const TYPES = ['subscription', 'stream'];
const register = { event_types: TYPES, fetch_event_types: TYPES, include_subscribers: true };

type Ev = Record<string, any>;

/** What identifies each event: its kind and the channels and users it names. */
function summary(events: Ev[]): Ev[] {
  return events.map((e) => {
    if (e.type === 'stream') return { type: 'stream', op: e.op, stream_ids: e.streams.map((s: Ev) => s.stream_id) };
    if (e.op === 'add' || e.op === 'remove') return { op: e.op, stream_ids: e.subscriptions.map((s: Ev) => s.stream_id) };
    return { op: e.op, stream_ids: e.stream_ids, user_ids: e.user_ids };
  });
}

async function channel(s: TestServer, name: string, extra: Record<string, unknown> = {}, principals: number[] = [s.owner.id]): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name }], principals, ...extra });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return (await s.api('GET', '/get_stream_id', s.owner, { stream: name })).body.stream_id;
}

function subscribe(s: TestServer, names: string[], users: TestUser[]) {
  return async () => {
    const res = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: names.map((name) => ({ name })), principals: users.map((u) => u.id) });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  };
}

function unsubscribe(s: TestServer, names: string[], users: TestUser[]) {
  return async () => {
    const res = await s.api('DELETE', '/users/me/subscriptions', s.owner, { subscriptions: names, principals: users.map((u) => u.id) });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  };
}

const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

t.test('subscribing: one add per user with all their channels, peer events combined', async (t) => {
  const s = await startTestServer(t);
  const [m1, m2, m3] = [await s.user(Role.MEMBER, 'One'), await s.user(Role.MEMBER, 'Two'), await s.user(Role.MEMBER, 'Three')];
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');
  const insider = await s.user(Role.MEMBER, 'Insider');
  // Everyone has a subscription, so include_subscribers shows in every state.
  await channel(s, 'lobby', {}, [s.owner.id, m1.id, m2.id, m3.id, watcher.id, admin.id, guest.id, insider.id]);
  const [a, b, c] = [await channel(s, 'a'), await channel(s, 'b'), await channel(s, 'c')];

  await t.test('one user, three public channels', async (t) => {
    const [mine, watched, owner, guests] = await verifyActionForEach(t, s, [m1, watcher, s.owner, guest], subscribe(s, ['a', 'b', 'c'], [m1]), { register });
    t.same(summary(mine!), [{ op: 'add', stream_ids: [a, b, c] }], 'the subscriber: one add with the three');
    t.same(mine![0]!.subscriptions.map((x: Ev) => x.subscribers), [[s.owner.id, m1.id], [s.owner.id, m1.id], [s.owner.id, m1.id]].map(sorted));
    t.same(summary(watched!), [{ op: 'peer_add', stream_ids: sorted([a, b, c]), user_ids: [m1.id] }], 'a member: one peer_add for the three');
    t.same(summary(owner!), summary(watched!), 'a subscriber of the channels: the same');
    t.same(guests, [], 'a guest may not see who is in public channels');
  });

  await t.test('three users, two public channels', async (t) => {
    const [one, three, watched, guests] = await verifyActionForEach(t, s, [m1, m3, watcher, guest], subscribe(s, ['d', 'e'], [m1, m2, m3]), { register });
    const d = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'd' })).body.stream_id;
    const e = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'e' })).body.stream_id;
    // The channels are new: everyone who may see them learns of them first.
    for (const events of [one!, three!]) {
      t.same(summary(events), [{ type: 'stream', op: 'create', stream_ids: [d] }, { type: 'stream', op: 'create', stream_ids: [e] }, { op: 'add', stream_ids: [d, e] }], 'each subscriber: one add, nothing about the others');
      t.same(events[2]!.subscriptions.map((x: Ev) => x.subscribers), [sorted([m1.id, m2.id, m3.id]), sorted([m1.id, m2.id, m3.id])]);
    }
    t.same(summary(watched!), [
      { type: 'stream', op: 'create', stream_ids: [d] },
      { type: 'stream', op: 'create', stream_ids: [e] },
      { op: 'peer_add', stream_ids: sorted([d, e]), user_ids: sorted([m1.id, m2.id, m3.id]) },
    ]);
    t.same(guests, []);
  });

  await t.test('a public channel with a guest subscriber gets an event of its own', async (t) => {
    const g = await channel(s, 'g', {}, [s.owner.id, guest.id]);
    const h = await channel(s, 'h');
    const [watched, guests] = await verifyActionForEach(t, s, [watcher, guest], subscribe(s, ['h', 'g'], [m1, m2]), { register });
    t.same(summary(watched!), [
      { op: 'peer_add', stream_ids: [g], user_ids: sorted([m1.id, m2.id]) },
      { op: 'peer_add', stream_ids: [h], user_ids: sorted([m1.id, m2.id]) },
    ]);
    t.same(summary(guests!), [{ op: 'peer_add', stream_ids: [g], user_ids: sorted([m1.id, m2.id]) }], 'the guest hears of its own channel only');
  });

  await t.test('public channels are grouped by the set of users they gained', async (t) => {
    const x = await channel(s, 'x');
    const y = await channel(s, 'y', {}, [s.owner.id, m2.id]);
    const z = await channel(s, 'z');
    const [watched, two] = await verifyActionForEach(t, s, [watcher, m2], subscribe(s, ['x', 'y', 'z'], [m1, m2]), { register });
    t.same(summary(watched!), [
      { op: 'peer_add', stream_ids: sorted([x, z]), user_ids: sorted([m1.id, m2.id]) },
      { op: 'peer_add', stream_ids: [y], user_ids: [m1.id] },
    ]);
    // m2 was in y already: their add has x and z, and they see m1 join y.
    t.same(summary(two!), [{ op: 'add', stream_ids: [x, z] }, { op: 'peer_add', stream_ids: [y], user_ids: [m1.id] }]);
  });

  await t.test('private channels: stream create then one add; one peer event per channel', async (t) => {
    const p1 = await channel(s, 'p1', { invite_only: true }, [s.owner.id, insider.id]);
    const p2 = await channel(s, 'p2', { invite_only: true });
    const [one, inside, admins, owner, watched] = await verifyActionForEach(
      t, s, [m1, insider, admin, s.owner, watcher], subscribe(s, ['p1', 'p2'], [m1, m2, m3]), { register },
    );
    const users = sorted([m1.id, m2.id, m3.id]);
    t.same(summary(one!), [{ type: 'stream', op: 'create', stream_ids: [p1] }, { type: 'stream', op: 'create', stream_ids: [p2] }, { op: 'add', stream_ids: [p1, p2] }]);
    t.same(summary(inside!), [{ op: 'peer_add', stream_ids: [p1], user_ids: users }], 'a subscriber of one of them hears of that one');
    for (const events of [admins!, owner!]) {
      t.same(summary(events), [{ op: 'peer_add', stream_ids: [p1], user_ids: users }, { op: 'peer_add', stream_ids: [p2], user_ids: users }]);
    }
    t.same(watched, [], 'an outsider hears nothing of private channels');
  });

  await t.test('private channels first, then public ones', async (t) => {
    const p3 = await channel(s, 'p3', { invite_only: true });
    const f = await channel(s, 'f');
    const [admins, watched, one] = await verifyActionForEach(t, s, [admin, watcher, m1], subscribe(s, ['f', 'p3'], [m1]), { register });
    t.same(summary(admins!), [{ op: 'peer_add', stream_ids: [p3], user_ids: [m1.id] }, { op: 'peer_add', stream_ids: [f], user_ids: [m1.id] }]);
    t.same(summary(watched!), [{ op: 'peer_add', stream_ids: [f], user_ids: [m1.id] }]);
    t.same(summary(one!), [{ type: 'stream', op: 'create', stream_ids: [p3] }, { op: 'add', stream_ids: [f, p3] }]);
  });

  await t.test('unsubscribing one user from three channels', async (t) => {
    const [mine, watched, guests] = await verifyActionForEach(t, s, [m1, watcher, guest], unsubscribe(s, ['a', 'b', 'c'], [m1]), { register });
    t.same(summary(mine!), [{ op: 'remove', stream_ids: [a, b, c] }]);
    t.same(mine![0]!.subscriptions, [{ stream_id: a, name: 'a' }, { stream_id: b, name: 'b' }, { stream_id: c, name: 'c' }]);
    t.same(summary(watched!), [{ op: 'peer_remove', stream_ids: sorted([a, b, c]), user_ids: [m1.id] }]);
    t.same(guests, []);
  });

  await t.test('unsubscribing several users from several channels', async (t) => {
    const [d, e] = [
      (await s.api('GET', '/get_stream_id', s.owner, { stream: 'd' })).body.stream_id as number,
      (await s.api('GET', '/get_stream_id', s.owner, { stream: 'e' })).body.stream_id as number,
    ];
    const [two, watched] = await verifyActionForEach(t, s, [m2, watcher], unsubscribe(s, ['d', 'e'], [m1, m2, m3]), { register });
    // Unlike the real server, which would leave m1 and m3 in m2's lists of these channels.
    t.same(summary(two!), [{ op: 'remove', stream_ids: [d, e] }, { op: 'peer_remove', stream_ids: sorted([d, e]), user_ids: sorted([m1.id, m3.id]) }], 'one remove; the others who left with them');
    t.same(summary(watched!), [{ op: 'peer_remove', stream_ids: sorted([d, e]), user_ids: sorted([m1.id, m2.id, m3.id]) }]);
  });

  await t.test('leaving private channels: one remove, one stream delete for all, a peer event per channel', async (t) => {
    const p1 = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'p1' })).body.stream_id as number;
    const p2 = (await s.api('GET', '/get_stream_id', s.owner, { stream: 'p2' })).body.stream_id as number;
    const [one, inside, admins, stays] = await verifyActionForEach(t, s, [m1, insider, admin, m3], unsubscribe(s, ['p1', 'p2'], [m1, m2]), { register });
    const users = sorted([m1.id, m2.id]);
    t.same(summary(one!), [{ op: 'remove', stream_ids: [p1, p2] }, { type: 'stream', op: 'delete', stream_ids: [p1, p2] }]);
    t.same(one![1]!.stream_ids, [p1, p2]);
    t.same(summary(inside!), [{ op: 'peer_remove', stream_ids: [p1], user_ids: users }]);
    t.same(summary(admins!), [{ op: 'peer_remove', stream_ids: [p1], user_ids: users }, { op: 'peer_remove', stream_ids: [p2], user_ids: users }]);
    t.same(summary(stays!), summary(admins!), 'a remaining subscriber of both hears of both');
  });
});

t.test('web-public channels share an event that guests get too', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  await setRealmProperties(s, { enable_spectator_access: true });
  const member = await s.user(Role.MEMBER, 'Member');
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  const guest = await s.user(Role.GUEST, 'Guest');
  await channel(s, 'lobby', {}, [s.owner.id, member.id, watcher.id, guest.id]);
  const w1 = await channel(s, 'w1', { is_web_public: true });
  const plain = await channel(s, 'plain');
  const w2 = await channel(s, 'w2', { is_web_public: true });
  const [watched, guests] = await verifyActionForEach(t, s, [watcher, guest], subscribe(s, ['w1', 'plain', 'w2'], [member]), { register });
  t.same(summary(watched!), [
    { op: 'peer_add', stream_ids: sorted([w1, w2]), user_ids: [member.id] },
    { op: 'peer_add', stream_ids: [plain], user_ids: [member.id] },
  ]);
  t.same(summary(guests!), [{ op: 'peer_add', stream_ids: sorted([w1, w2]), user_ids: [member.id] }]);
});

t.test('a new account joins the default channels in one event for each peer', async (t) => {
  const s = await startTestServer(t);
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  const ids: number[] = [];
  for (const name of ['d1', 'd2', 'd3']) {
    ids.push(await channel(s, name, {}, [s.owner.id, watcher.id]));
    await s.api('POST', '/default_streams', s.owner, { stream_id: ids[ids.length - 1] });
  }
  let newcomer = 0;
  const [watched] = await verifyActionForEach(t, s, [watcher], async () => {
    newcomer = (await s.user(Role.MEMBER, 'Newcomer')).id;
  }, { register: { ...register, event_types: [...TYPES, 'realm_user'], fetch_event_types: [...TYPES, 'realm_user'] } });
  t.same(summary(watched!.filter((e) => e.type === 'subscription')), [{ op: 'peer_add', stream_ids: sorted(ids), user_ids: [newcomer] }]);
});

t.test('a queue reading after the fact gets what a waiting queue got, with the same ids', async (t) => {
  const s = await startTestServer(t);
  const [m1, m2] = [await s.user(Role.MEMBER, 'One'), await s.user(Role.MEMBER, 'Two')];
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  await channel(s, 'lobby', {}, [s.owner.id, watcher.id]);
  const q1 = await channel(s, 'q1');
  const q2 = await channel(s, 'q2', { invite_only: true }, [s.owner.id, watcher.id]);

  const live = (await s.api('POST', '/register', watcher, register)).body;
  const later = (await s.api('POST', '/register', watcher, register)).body;
  // The waiting poll is answered by the hub as the events are folded.
  const waiting = s.api('GET', '/events', watcher, { queue_id: live.queue_id, last_event_id: live.last_event_id });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await subscribe(s, ['q1', 'q2'], [m1, m2])();
  const first = (await waiting).body.events as Ev[];
  t.ok(first.length > 0, 'the waiting poll was answered with events');
  const rest = (await s.api('GET', '/events', watcher, { queue_id: live.queue_id, last_event_id: first[first.length - 1]!.id, dont_block: true })).body.events as Ev[];
  const delivered = [...first, ...rest].filter((e) => e.type !== 'heartbeat');
  const users = sorted([m1.id, m2.id]);
  t.same(summary(delivered), [{ op: 'peer_add', stream_ids: [q2], user_ids: users }, { op: 'peer_add', stream_ids: [q1], user_ids: users }]);
  const readLater = ((await s.api('GET', '/events', watcher, { queue_id: later.queue_id, last_event_id: later.last_event_id, dont_block: true })).body.events as Ev[])
    .filter((e) => e.type !== 'heartbeat');
  t.same(readLater, delivered, 'same events, same ids');

  // A hub that never saw them (another process, or this one restarted) reads them from the log alike.
  const fresh = new EventQueueHub(s.platform.db, s.platform.store);
  const row = (await s.platform.db.selectFrom('event_queues').select('options').where('id', '=', later.queue_id).executeTakeFirstOrThrow()).options;
  const recipient: Recipient = {
    user: (await getUserById(s.platform.db, watcher.id))!,
    realm: (await getRealm(s.platform.db, 1))!,
    queue: row as unknown as QueueOptions,
    queueId: later.queue_id,
  };
  const { events: replayed } = await fresh.pending(recipient, later.last_event_id, s.platform.projections.projectedPosition);
  t.same(replayed, delivered, 'a fresh hub gives the same events and ids');
});
