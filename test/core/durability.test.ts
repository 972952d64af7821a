import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, AckPolicy, DeliverPolicy } from 'nats';
import { testConfig } from '../helpers/config.js';
import { startChildServer, killHard } from '../helpers/child-server.js';
import { freePort } from '../helpers/ports.js';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { createPlatform } from '../../src/platform.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { allProjections } from '../../projections/index.js';

t.test('kill -9 during writes: every acknowledged write survives in the log and the read tables', async (t) => {
  const config = await testConfig();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'durability-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = String(await freePort());
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: port };
  if (config.databaseUrl) env.DATABASE_URL = config.databaseUrl;
  if (config.natsUrl) Object.assign(env, { NATS_URL: config.natsUrl, NATS_STREAM: config.natsStream });

  let server = await startChildServer(env);
  const zuliprc = readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const key = /key=(\S+)/.exec(zuliprc)![1]!;
  const auth = basicAuth('owner@example.com', key);

  const acknowledged: number[] = [];
  let attempted = 0;
  let stop = false;
  const writer = async (w: number) => {
    while (!stop) {
      attempted += 1;
      const email = `w${w}-${attempted}@example.com`;
      try {
        const response = await fetch(`${server.url}/api/v1/users`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: encodeParams({ email, full_name: `Writer ${w} ${attempted}` }),
        });
        if (response.status === 200) acknowledged.push(((await response.json()) as { user_id: number }).user_id);
      } catch {
        // the connection died with the server: not acknowledged
      }
    }
  };
  const writers = Array.from({ length: 6 }, (_, w) => writer(w));
  await new Promise((r) => setTimeout(r, 1_500));
  await killHard(server);
  stop = true;
  await Promise.all(writers);
  t.ok(acknowledged.length > 5, `${acknowledged.length} writes acknowledged before the kill`);

  server = await startChildServer(env);
  const list = await fetch(`${server.url}/api/v1/users`, { headers: { authorization: auth } });
  const members = ((await list.json()) as { members: Array<{ user_id: number }> }).members.map((m) => m.user_id);
  const missing = acknowledged.filter((id) => !members.includes(id));
  t.same(missing, [], 'every acknowledged user is served after restart');
  await killHard(server);

  // The log itself: every acknowledged write is there, and the chain is intact.
  const platform = await createPlatform({ ...config, dataDir }, { projections: allProjections, startWorkers: config.natsUrl !== undefined });
  try {
  const created = await platform.db.selectFrom('events').select('data').where('type', '=', 'UserCreated').execute();
  const inLog = new Set(created.map((e) => Number(e.data.user_id)));
  t.same(acknowledged.filter((id) => !inLog.has(id)), [], 'every acknowledged user is in the log');
  t.equal((await verifyChain(platform.db)).ok, true, 'the hash chain is intact');

  if (config.natsUrl) {
    const head = await platform.store.head();
    for (let i = 0; i < 100 && (platform.relay?.relayedPosition ?? 0) < head.position; i++) await new Promise((r) => setTimeout(r, 100));
    const nc = await connect({ servers: config.natsUrl });
    t.teardown(() => nc.close());
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(config.natsStream, { durable_name: 'durability', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
    const consumer = await nc.jetstream().consumers.get(config.natsStream, 'durability');
    const ids = new Set<string>();
    let received = 0;
    const messages = await consumer.fetch({ max_messages: head.position + 50, expires: 3_000 });
    for await (const msg of messages) {
      ids.add(msg.json<{ event_id: string }>().event_id);
      received += 1;
      if (received === head.position) break;
    }
    t.equal(received, head.position, 'NATS has every event of the log');
    t.equal(ids.size, received, 'and each event_id exactly once');
  }
  } finally {
    await platform.close();
  }
});
