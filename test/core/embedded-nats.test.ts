/**
 * The embedded database with NATS (NATS_URL set, DATABASE_URL not): PGlite has one connection, so
 * the relay must never hold it while it talks to NATS or asks the pool for another.
 */
import t from 'tap';
import net from 'node:net';
import { connect } from 'nats';
import { testMetadata } from '../helpers/platform.js';
import { testConfig } from '../helpers/config.js';
import { createPlatform } from '../../src/platform.js';
import { allProjections } from '../../projections/index.js';

const natsUrl = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 4222), hostname, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const skip = (await reachable(natsUrl)) ? false : `no NATS at ${natsUrl}`;

t.test('embedded database + NATS: writes are answered and every event reaches JetStream once', { skip }, async (t) => {
  const config = await testConfig({ databaseUrl: undefined, natsUrl });
  const platform = await createPlatform(config, { projections: allProjections, inMemory: true });
  t.teardown(() => platform.close());
  t.equal(platform.database.kind, 'pglite');
  t.equal(platform.bus.kind, 'nats');

  const appended = [];
  for (let i = 0; i < 20; i++) {
    const write = platform.store.append([{ streamId: `embedded-nats-${i}`, expectedVersion: -1, events: [{ type: 'Probe', data: { i } }] }], testMetadata());
    const outcome = await Promise.race([write, new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 5_000))]);
    if (outcome === 'stuck') {
      t.fail(`append ${i} did not finish within 5 s`);
      return;
    }
    appended.push(...outcome);
  }
  t.equal(appended.length, 20, 'every append answered');

  const nc = await connect({ servers: natsUrl });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  const head = appended[appended.length - 1]!.position;
  const deadline = Date.now() + 10_000;
  let messages = 0;
  while (Date.now() < deadline) {
    messages = await jsm.streams.info(config.natsStream).then((info) => info.state.messages, () => 0);
    if (messages >= head) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(messages, head, 'JetStream holds each event of the log once');
  await jsm.streams.delete(config.natsStream).catch(() => undefined);
});

