import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, Role } from '../helpers/server.js';
import { allProjections } from '../../projections/index.js';
import { defineProjection } from '../../projections/define.js';
import type { DomainEventType } from '../../src/domain/events.js';
import { ping, presenceEvents } from '../helpers/presence-fixture.js';

/**
 * A projection that holds the fold of `types` while closed: the whole batch (every read table and
 * checkpoint) waits with it, as when the projection worker is busy with a long batch.
 */
function foldGate(types: DomainEventType[]) {
  let release = () => {};
  let opened: Promise<void> = Promise.resolve();
  const held = async () => {
    await opened;
    return 'unchanged' as const;
  };
  const projection = defineProjection({ name: 'test_fold_gate', version: 1, tables: [], handlers: Object.fromEntries(types.map((type) => [type, held])) });
  return {
    projection,
    close() {
      opened = new Promise((resolve) => (release = resolve));
    },
    open() {
      release();
    },
  };
}

/** The request's answer, or 'pending' if it has none within `ms`. */
async function within<T>(ms: number, request: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([request, sleep(ms).then(() => 'pending' as const)]);
}

const settledFlag = (request: Promise<unknown>) => {
  const state = { settled: false };
  void request.finally(() => (state.settled = true));
  return state;
};

t.test('PUT /bot_storage answers once logged; every read of the storage waits for its fold', async (t) => {
  const gate = foldGate(['BotStorageSet', 'BotStorageRemoved']);
  const s = await startTestServer(t, {}, { projections: [...allProjections, gate.projection] });
  try {
    const owner = await s.user(Role.MEMBER, 'Owner');
    const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
    t.equal((await s.api('PUT', '/bot_storage', bot, { storage: { count: '1' } })).status, 200);
    t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { count: '1' });

    // (Nothing below touches the database while the fold is held: the embedded one has one
    // connection, which the held fold keeps.)
    gate.close();
    const put = await within(3_000, s.api('PUT', '/bot_storage', bot, { storage: { count: '2' } }));
    t.not(put, 'pending', 'the write answers while its fold is held');
    if (put === 'pending') return;
    t.equal(put.status, 200);
    t.ok(s.platform.projections.projectedPosition < s.platform.commands.answeredPosition, 'and the read tables do not have it yet');

    const read = s.api('GET', '/bot_storage', bot);
    const next = s.api('PUT', '/bot_storage', bot, { storage: { count: '3', other: 'x' } });
    const readState = settledFlag(read);
    const nextState = settledFlag(next);
    if (process.env.TEST_DATABASE_URL) {
      // The bot's own unfolded write is applied in memory to what the read tables say.
      t.not(await within(3_000, next), 'pending', 'the next write answers while the fold is held: it decides on the bot\'s unfolded write');
    } else {
      await sleep(300);
      t.notOk(nextState.settled, 'on the embedded database the next write waits: the held fold keeps its one connection');
    }
    t.notOk(readState.settled, 'a read does not answer before the fold');
    gate.open();
    // The next write may have answered before the read does: the read may show it, never anything older.
    const seen = (await read).body.storage;
    t.ok(seen.count === '2' || (seen.count === '3' && seen.other === 'x'), `the read sees the write answered before it (${JSON.stringify(seen)})`);
    t.equal((await next).status, 200);
    t.same((await s.api('GET', '/bot_storage', bot)).body.storage, { count: '3', other: 'x' });
    t.same((await s.api('GET', '/bot_storage', bot, { keys: ['other'] })).body.storage, { other: 'x' });
  } finally {
    gate.open();
  }
});

t.test('a first presence ping answers once logged, shown from the last-seen table, and reaches every queue', async (t) => {
  const gate = foldGate(['PresenceChanged']);
  const s = await startTestServer(t, {}, { projections: [...allProjections, gate.projection] });
  try {
    const ann = await s.user(Role.MEMBER, 'Ann');
    const cy = await s.user(Role.MEMBER, 'Cy');
    const queue = await s.api('POST', '/register', cy, { event_types: ['presence'] });

    gate.close();
    const first = await within(3_000, ping(s, ann, { ping_only: true }));
    t.not(first, 'pending', 'the ping answers while the fold of its PresenceChanged is held');
    if (first === 'pending') return;
    t.equal(first.status, 200);
    t.ok(s.platform.projections.projectedPosition < s.platform.commands.answeredPosition, 'and its event is not folded yet');
    if (s.platform.database.kind === 'postgres') {
      // (The embedded database has one connection, which the held fold keeps.)
      t.equal((await presenceEvents(s, ann.id)).length, 1, 'the change is logged');
      const shown = await within(3_000, s.api('GET', `/users/${ann.id}/presence`, cy));
      t.not(shown, 'pending', 'others read presence without waiting for the fold');
      if (shown !== 'pending') t.equal(shown.body.presence?.aggregated?.status, 'active', 'and see the user online');
    }

    const poll = s.api('GET', '/events', cy, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id, dont_block: true });
    await sleep(100);
    gate.open();
    const polled = await poll;
    t.match(polled.body.events, [{ type: 'presence', user_id: ann.id, presence: { website: { status: 'active' } } }],
      'a poll after the answer gets the event, as after any other command');
    t.equal((await presenceEvents(s, ann.id)).length, 1, 'logged once');
  } finally {
    gate.open();
  }
});

t.test('concurrent first pings of many users: each logged once, all shown at once, all delivered', async (t) => {
  const s = await startTestServer(t);
  const watcher = await s.user(Role.MEMBER, 'Watcher');
  const users = [];
  for (let i = 0; i < 20; i++) users.push(await s.user(Role.MEMBER, `Pinger ${i}`));
  const queue = await s.api('POST', '/register', watcher, { event_types: ['presence'], slim_presence: true });

  const replies = await Promise.all(users.flatMap((u) => [ping(s, u, { ping_only: true }), ping(s, u, { ping_only: true }), ping(s, u, { slim_presence: true })]));
  t.same(replies.map((r) => r.status), Array(replies.length).fill(200));
  const realm = await s.api('GET', '/realm/presence', watcher);
  t.same(Object.keys(realm.body.presences).sort(), users.map((u) => u.email).sort(), 'everyone is shown right after their answers');
  for (const u of users) t.equal((await presenceEvents(s, u.id)).length, 1, `${u.email}: came online once`);

  const polled = await s.api('GET', '/events', watcher, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id, dont_block: true });
  const delivered = (polled.body.events as Array<{ type: string; user_id: number }>).filter((e) => e.type === 'presence').map((e) => e.user_id);
  t.same(delivered.sort((a, b) => a - b), users.map((u) => u.id).sort((a, b) => a - b), 'one presence event per user in the queue');
});
