import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, Role } from '../helpers/server.js';
import { reactivateRealm } from '../../src/services/realm-deactivation.js';

const REFUSED = { result: 'error', msg: 'This organization has been deactivated', code: 'REALM_DEACTIVATED' };

t.test('POST /realm/deactivate: owners only; queues end, keys are refused; the CLI reactivates', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.user(Role.MEMBER, 'Robot', { bot_type: 1, bot_owner_id: alice.id });

  for (const who of [admin, alice]) {
    const refused = await s.api('POST', '/realm/deactivate', who);
    t.same([refused.status, refused.body.msg, refused.body.code], [400, 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL']);
  }

  const queue = await s.api('POST', '/register', alice, { event_types: ['realm', 'message'] });
  const idle = await s.api('POST', '/register', admin, {});
  t.equal(queue.status, 200);
  // A long-poll open at the moment of deactivation receives the documented event.
  const polling = s.api('GET', '/events', alice, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id });
  await new Promise((r) => setTimeout(r, 200));
  const done = await s.api('POST', '/realm/deactivate', s.owner);
  t.same([done.status, done.body.result], [200, 'success']);
  const polled = await polling;
  t.equal(polled.status, 200);
  t.same(polled.body.events.map((e: any) => ({ ...e, id: 0 })), [{ type: 'realm', op: 'deactivated', realm_id: 1, id: 0 }]);

  // Every key is refused with the real server's error, GET /events included.
  const again = await s.api('GET', '/events', alice, { queue_id: queue.body.queue_id, last_event_id: polled.body.events[0].id, dont_block: true });
  t.same([again.status, again.body], [401, REFUSED]);
  for (const who of [s.owner, admin, alice, bot]) {
    const r = await s.api('GET', '/users/me', who);
    t.same([r.status, r.body], [401, REFUSED], `${who.email} is refused`);
  }
  t.same((await s.api('POST', '/register', alice, {})).body, REFUSED);
  t.same((await s.api('POST', '/fetch_api_key', null, { username: alice.email, password: 'whatever' })).status, 401);
  // Requests without credentials still answer (the server, not the organization).
  t.equal((await s.api('GET', '/server_settings', null)).status, 200);

  // Every event queue of the organization has ended.
  const queues = await s.platform.db.selectFrom('event_queues').select('id').execute();
  t.same(queues, [], 'no queue is left');
  const ended = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'QueueDeleted').execute();
  t.same(new Set(ended.map((e) => (e.data as any).queue_id)), new Set([queue.body.queue_id, idle.body.queue_id]));

  // Reactivation (what `npm run cli -- reactivate-realm` runs): keys work again; old queues stay ended.
  const meta = { actorId: null, realmId: 1, client: 'cli', requestId: randomUUID(), now: new Date() };
  t.equal(await reactivateRealm(s.platform, meta, 1), true);
  t.equal(await reactivateRealm(s.platform, meta, 1), false, 'a second time has nothing to do');
  t.equal((await s.api('GET', '/users/me', alice)).status, 200);
  const old = await s.api('GET', '/events', alice, { queue_id: queue.body.queue_id, last_event_id: -1, dont_block: true });
  t.same([old.status, old.body.code], [400, 'BAD_EVENT_QUEUE_ID']);
  t.equal((await s.api('POST', '/register', alice, {})).status, 200, 'clients register again');
});
