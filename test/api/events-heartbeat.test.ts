import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

const HEARTBEAT_MS = 2_000; // HEARTBEAT_SECONDS in tests (test/helpers/config.ts)
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

t.test('blocked polls: a heartbeat once HEARTBEAT_SECONDS have passed, from one timer for all of them', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const queues: Array<{ queue_id: string; last_event_id: number }> = [];
  for (let i = 0; i < 30; i++) {
    const reg = await s.api('POST', '/register', member, { event_types: ['realm_user'], fetch_event_types: [] });
    t.equal(reg.status, 200);
    queues.push(reg.body);
  }
  // A first poll answered, so whatever timer the server keeps for blocked polls already runs.
  await s.api('GET', '/events', member, { queue_id: queues[0]!.queue_id, last_event_id: queues[0]!.last_event_id });

  const before = timers();
  const started = Date.now();
  const polls = queues.map((q) => s.api('GET', '/events', member, { queue_id: q.queue_id, last_event_id: q.last_event_id }).then((r) => ({ r, at: Date.now() - started })));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.ok(timers() - before < 5, `30 blocked polls add no timer each (${timers() - before} more timers)`);

  for (const { r, at } of await Promise.all(polls)) {
    t.equal(r.status, 200);
    t.match(r.body.events, [{ type: 'heartbeat' }]);
    t.ok(at >= HEARTBEAT_MS - 50 && at < HEARTBEAT_MS + 1_500, `answered after the heartbeat time (${at} ms)`);
  }
});
