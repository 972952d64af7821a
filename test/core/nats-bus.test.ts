import t from 'tap';
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { NatsBus } from '../../src/bus/nats-bus.js';
import { isJetStreamRefusal } from '../../src/bus/nats-relay.js';
import type { WakeSignal } from '../../src/bus/bus.js';
import type { StoredEvent } from '../../src/eventstore/types.js';

const natsUrl = process.env.TEST_NATS_URL;
const skip = !natsUrl && 'NATS only (TEST_NATS_URL)';

function openBus(stream: string, logId: string): NatsBus {
  return new NatsBus(natsUrl!, stream, { logId, hasEvent: async () => true });
}
const freshStream = () => `TEST_BUS_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

t.test('a wake-up reaches its own process once, and other processes marked remote', { skip }, async (t) => {
  const stream = freshStream();
  const logId = randomUUID();
  const a = openBus(stream, logId);
  const b = openBus(stream, logId);
  t.teardown(async () => {
    await a.close();
    await b.close();
    const nc = await connect({ servers: natsUrl });
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  t.ok(await a.waitConnected(5_000) && await b.waitConnected(5_000), 'both connected');
  const seenByA: WakeSignal[] = [];
  const seenByB: WakeSignal[] = [];
  a.onWake((signal) => seenByA.push(signal));
  b.onWake((signal) => seenByB.push(signal));
  a.publishWake({ kind: 'appended', position: 7 });
  await until(() => seenByB.length > 0);
  // Time for an echo to come back to A, were it delivered.
  b.publishWake({ kind: 'projected', position: 8 });
  await until(() => seenByA.length > 1);
  await new Promise((r) => setTimeout(r, 200));
  t.same(seenByA, [{ kind: 'appended', position: 7 }, { kind: 'projected', position: 8, remote: true }], 'A: its own at once, B\'s as remote, no echo');
  t.same(seenByB, [{ kind: 'appended', position: 7, remote: true }, { kind: 'projected', position: 8 }], 'B: the same, seen from the other side');
});

t.test('published events land in order; one whose predecessor is not the last stored is refused', { skip }, async (t) => {
  const stream = freshStream();
  const logId = randomUUID();
  const bus = openBus(stream, logId);
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  t.teardown(async () => {
    await bus.close();
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  t.ok(await bus.waitConnected(5_000), 'connected');
  const event = (position: number): StoredEvent => ({
    position, event_id: randomUUID(), stream_id: 'probe', stream_version: position, type: 'Probe', schema_version: 1, data: { position }, metadata: {} as StoredEvent['metadata'], hash: '',
  });
  const events = Array.from({ length: 50 }, (_, i) => event(i + 1));
  t.equal(await bus.lastPublishedPosition(), 0, 'an empty stream');
  await bus.publishEvents(events.slice(0, 40));
  await bus.publishEvents(events.slice(40));
  const info = await jsm.streams.info(stream);
  t.equal(info.state.messages, 50, 'every event stored once');
  const positions: number[] = [];
  for (let seq = 1; seq <= 50; seq++) positions.push(Number((await jsm.streams.getMessage(stream, { seq })).header.get('Chat-Position')));
  t.same(positions, events.map((e) => e.position), 'in log order');
  t.equal(await bus.lastPublishedPosition(), 50, 'the last stored position');

  // An already stored event (a duplicate, dropped) followed by a new one: the new one names a
  // predecessor that is not the stream's last message, so it is refused rather than stored.
  await t.rejects(bus.publishEvents([events[10]!, event(51)]), 'the batch fails');
  t.equal((await jsm.streams.info(stream)).state.messages, 50, 'nothing stored after the mismatch');
  t.equal(await bus.lastPublishedPosition(), 50, 'the relay would start again after 50');
});

t.test('a publish continuing from this process\'s own last one is refused once another process published in between', { skip }, async (t) => {
  const stream = freshStream();
  const logId = randomUUID();
  const a = openBus(stream, logId);
  const b = openBus(stream, logId);
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  t.teardown(async () => {
    await a.close();
    await b.close();
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  t.ok(await a.waitConnected(5_000) && await b.waitConnected(5_000), 'both connected');
  const event = (position: number): StoredEvent => ({
    position, event_id: randomUUID(), stream_id: 'probe', stream_version: position, type: 'Probe', schema_version: 1, data: { position }, metadata: {} as StoredEvent['metadata'], hash: '',
  });
  const events = Array.from({ length: 6 }, (_, i) => event(i + 1));
  t.equal(a.ownLastPublished(), undefined, 'nothing of its own to continue from at first');
  await t.rejects(a.publishEvents(events.slice(0, 1), { continuing: true }), 'so a continuing publish is refused before it is sent');
  t.equal(await a.lastPublishedPosition(), 0, 'and nothing was stored');

  await a.publishEvents(events.slice(0, 2));
  t.equal(a.ownLastPublished(), 2, 'its own last publish');
  await a.publishEvents(events.slice(2, 3), { continuing: true });
  t.equal(a.ownLastPublished(), 3, 'a continuing publish moves it on');

  await b.lastPublishedPosition();
  await b.publishEvents(events.slice(3, 4));
  const refused = await a.publishEvents(events.slice(4), { continuing: true }).then(() => undefined, (error: unknown) => error);
  t.ok(isJetStreamRefusal(refused), 'after another process\'s publish, JetStream refuses the continuing one (the relay then asks the stream, in the same pass)');
  t.equal(a.ownLastPublished(), undefined, 'and its guess is dropped');
  const info = await jsm.streams.info(stream);
  t.equal(info.state.messages, 4, 'nothing stored after the other process\'s event');
  t.equal(await a.lastPublishedPosition(), 4, 'the stream says where it stands');
  await a.publishEvents(events.slice(4));
  const positions: number[] = [];
  for (let seq = 1; seq <= 6; seq++) positions.push(Number((await jsm.streams.getMessage(stream, { seq })).header.get('Chat-Position')));
  t.same(positions, [1, 2, 3, 4, 5, 6], 'every event once, in log order');
});

t.test('a connection whose set-up failed is closed before the next attempt, and close() leaves no socket open', { skip }, async (t) => {
  const stream = freshStream();
  const logId = randomUUID();
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  t.teardown(async () => {
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  // A stream made before logs had ids: the bus asks the log whether its last event is ours.
  // The first answer fails (the database is away), so the first connection's set-up fails.
  await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.events.>`] });
  await (await nc.jetstream()).publish(`${stream.toLowerCase()}.events.Probe`, new Uint8Array(), { msgID: randomUUID() });
  const sockets = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
  const before = sockets();
  let asked = 0;
  const bus = new NatsBus(natsUrl!, stream, {
    logId,
    hasEvent: async () => {
      asked += 1;
      if (asked === 1) throw new Error('database away');
      return true;
    },
  });
  t.ok(await bus.waitConnected(10_000), 'connected on the second attempt');
  t.equal(asked, 2, 'the log was asked twice');
  t.equal(sockets(), before + 1, 'one connection open: the failed attempt\'s was closed');
  await bus.close();
  await until(() => sockets() === before);
  t.equal(sockets(), before, 'close() leaves no socket of its own');
});
