/**
 * Read-your-writes across a PostgreSQL crash (issue 24 item 7): every send answered 200 before
 * PostgreSQL is stopped with `-m immediate` must be readable as soon as the database is back, with
 * no other write needed to wake the projection worker.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildServer, killHard } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';

t.setTimeout(170_000);

t.test('acknowledged sends are readable right after PostgreSQL crashes and restarts', async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-pg-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChildServer({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    DATABASE_URL: postgres.url,
    NATS_URL: nats.url,
    NATS_STREAM: 'CRASH',
  });
  t.teardown(() => killHard(server));
  process.once('exit', () => server.process.kill('SIGKILL'));
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const call = client(server.url, 'owner@example.com', key);
  const created = await call('POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'crash' }]) });
  t.equal(created.status, 200);

  for (let round = 0; round < 3; round++) {
    const sent: number[] = [];
    await Promise.all(Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 25; i++) {
        const r = await call('POST', '/messages', { type: 'stream', to: 'crash', topic: `round ${round}`, content: `m ${round} ${w} ${i}` });
        if (r.status === 200) sent.push(r.body.id);
      }
    }));
    t.equal(sent.length, 100, `round ${round}: 100 sends acknowledged`);
    postgres.stop('immediate');
    postgres.start();
    // The first request may still find the pool's connections dead (a 503); nothing is written meanwhile.
    const back = Date.now();
    while (Date.now() - back < 30_000 && (await call('GET', '/users/me')).status !== 200) await new Promise((r) => setTimeout(r, 100));
    const missing: number[] = [];
    for (const id of sent) {
      let r = await call('GET', `/messages/${id}`);
      for (let retry = 0; r.status === 503 && retry < 50; retry++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await call('GET', `/messages/${id}`);
      }
      if (r.status !== 200) missing.push(id);
    }
    t.same(missing, [], `round ${round}: every acknowledged message is readable after the crash`);
  }
});
