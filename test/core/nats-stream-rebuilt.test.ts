import t from 'tap';
import { connect } from 'nats';
import { testMetadata } from '../helpers/platform.js';
import { testConfig } from '../helpers/config.js';
import { createPlatform } from '../../src/platform.js';
import { allProjections } from '../../projections/index.js';

// docs/OPERATIONS.md, "Backup and restore": the JetStream stream is a copy of the log, never the
// truth. Lost (deleted, or a NATS restored from an older backup), the relay refills it from the log.
const productionPass = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_NATS_URL);

t.test('a deleted JetStream stream is refilled from the log when a server starts', { skip: !productionPass && 'PostgreSQL + NATS only' }, async (t) => {
  const config = await testConfig();
  const nc = await connect({ servers: config.natsUrl });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  t.teardown(() => jsm.streams.delete(config.natsStream).catch(() => undefined));
  const messagesIn = () => jsm.streams.info(config.natsStream).then((info) => info.state.messages, () => -1);
  const waitFor = async (count: number) => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await messagesIn()) < count) await new Promise((r) => setTimeout(r, 200));
    return messagesIn();
  };
  const append = async (platform: Awaited<ReturnType<typeof createPlatform>>, n: number) => {
    for (let i = 0; i < n; i++) {
      await platform.store.append([{ streamId: `refill-${Date.now()}-${i}`, expectedVersion: -1, events: [{ type: 'Probe', data: { i } }] }], testMetadata());
    }
    // Positions may have gaps; the stream holds one message per event.
    const row = await platform.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  };

  let platform = await createPlatform(config, { projections: allProjections });
  const head = await append(platform, 10);
  t.equal(await waitFor(head), head, 'the stream holds the log');
  await platform.close();

  await jsm.streams.delete(config.natsStream);
  t.equal(await messagesIn(), -1, 'the stream is gone');

  platform = await createPlatform(config, { projections: allProjections });
  t.teardown(() => platform.close());
  const later = await append(platform, 3);
  t.equal(await waitFor(later), later, 'a starting server recreates the stream and republishes the whole log from position 1');
  const first = await jsm.streams.getMessage(config.natsStream, { seq: 1 });
  const lowest = await platform.db.selectFrom('events').select((eb) => eb.fn.min<number>('position').as('p')).executeTakeFirstOrThrow();
  t.equal(first.json<{ position: number }>().position, Number(lowest.p), 'in log order, from the first event');
});
