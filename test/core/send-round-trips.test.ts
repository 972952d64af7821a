/**
 * What a lone send to a channel costs in database round trips, on PostgreSQL (the embedded backend
 * has no wire): the count is the send's latency floor on any machine where a round trip is dear.
 */
import t from 'tap';
import pg from 'pg';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';

if (!process.env.TEST_DATABASE_URL) {
  t.pass('PostgreSQL only (TEST_DATABASE_URL unset)');
} else {
  t.test('a lone send to a channel', async (t) => {
    const s = await startTestServer(t);
    const alice = await s.user(Role.MEMBER, 'Alice');
    const general = await createChannel(s, s.owner, 'general', [alice]);
    await sendStream(s, alice, general, 'one', 'the first message');
    let roundTrips = 0;
    const prototype = pg.Connection.prototype as unknown as { emit(event: string, ...args: unknown[]): boolean };
    const emit = prototype.emit;
    prototype.emit = function (this: unknown, event: string, ...args: unknown[]) {
      if (event === 'readyForQuery') roundTrips++;
      return emit.call(this, event, ...args);
    };
    t.teardown(() => void (prototype.emit = emit));
    // The process's background work (the scheduler's poll, the relay) also talks to the database:
    // measured for as long while idle, and taken off.
    const sends = 20;
    const started = Date.now();
    for (let i = 0; i < sends; i++) await sendStream(s, alice, general, 'one', `message ${i}`);
    const busyMs = Date.now() - started;
    const busy = roundTrips;
    await new Promise((resolve) => setTimeout(resolve, busyMs));
    const idle = roundTrips - busy;
    prototype.emit = emit;
    const perSend = (busy - idle) / sends;
    t.comment(`${busy} round trips in ${busyMs} ms of sends, ${idle} in as long idle: ${perSend} per send`);
    // Three on the send's path (the channel look-up, the append, and the fold pass: BEGIN, the claim,
    // the insert and COMMIT in one write); the relay's reads of what was appended, batched, add under one.
    t.ok(perSend < 4.4, `under four and two fifths (${perSend}); 7.35 before BEGIN rode with the claim and the first-message update was skipped, 5.6-5.8 before the claim rode with the insert, 4.45 before the insert rode with the COMMIT`);
  });
}
