/**
 * Two deployments (two databases) on one NATS server (issue 24 item 8). With the same stream
 * name, the second must refuse to start, loudly, instead of mixing its log into the first's
 * stream and taking the first's wake-ups for its own. With a stream each, both work side by side:
 * every write is readable as soon as it is acknowledged, and each stream holds exactly its own log.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connect } from 'nats';
import { startChildServer, killHard } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';

t.setTimeout(170_000);

t.test('two logs on one NATS server', async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  t.teardown(() => admin.end());
  await admin.query('CREATE DATABASE second');
  const secondUrl = postgres.url.replace(/\/postgres$/, '/second');

  const newDataDir = () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-shared-nats-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    return dataDir;
  };
  const start = async (databaseUrl: string, dataDir: string, extra: Record<string, string> = {}) => {
    const env: Record<string, string> = { DATA_DIR: dataDir, PORT: String(await freePort()), DATABASE_URL: databaseUrl, NATS_URL: nats.url, ...extra };
    delete process.env.NATS_STREAM; // the default stream name, for both
    const server = await startChildServer(env);
    t.teardown(() => killHard(server));
    process.once('exit', () => server.process.kill('SIGKILL'));
    const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
    return { server, call: client(server.url, 'owner@example.com', key) };
  };

  const first = await start(postgres.url, newDataDir());
  t.equal((await first.call('POST', '/users', { email: 'one@example.com', full_name: 'One' })).status, 200);

  // Same NATS, same (default) stream name, another database: refused at start, saying why.
  // The second deployment keeps its DATA_DIR (its key-encryption key) when it is restarted below.
  const secondDir = newDataDir();
  let refused: string | undefined;
  try {
    await start(secondUrl, secondDir);
  } catch (error) {
    refused = String(error);
  }
  t.match(refused ?? '', /server exited early/, 'the second deployment does not start on the first one\'s stream');
  t.match(refused ?? '', /NATS stream CHAT_EVENTS holds another log/, 'and says so');

  // Its own stream: both run side by side, each reading its writes back at once while the other writes.
  const second = await start(secondUrl, secondDir, { NATS_STREAM: 'SECOND_EVENTS' });
  let running = true;
  const noise = (async () => {
    for (let i = 0; running; i++) await first.call('POST', '/users', { email: `noise${i}@example.com`, full_name: `Noise ${i}` });
  })();
  const unreadable: number[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await second.call('POST', '/users', { email: `two${i}@example.com`, full_name: `Two ${i}` });
    t.equal(r.status, 200);
    if ((await second.call('GET', `/users/${r.body.user_id}`)).status !== 200) unreadable.push(r.body.user_id);
  }
  running = false;
  await noise;
  t.same(unreadable, [], 'every write on the second deployment is readable right after it is acknowledged');

  // Each stream holds its own log's events only, all of them.
  const logCount = async (url: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT count(*)::int AS n, (SELECT log_id FROM log_identity) AS log FROM events');
      return rows[0] as { n: number; log: string };
    } finally {
      await c.end();
    }
  };
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  for (const [stream, url] of [['CHAT_EVENTS', postgres.url], ['SECOND_EVENTS', secondUrl]] as const) {
    const log = await logCount(url);
    let info = await jsm.streams.info(stream);
    for (let i = 0; i < 100 && info.state.messages < log.n; i++) {
      await new Promise((r) => setTimeout(r, 100));
      info = await jsm.streams.info(stream);
    }
    t.equal(info.config.description, `zulip-es log ${log.log}`, `${stream} names its log`);
    t.equal(info.state.messages, log.n, `${stream} holds every event of its log, and nothing else`);
    const last = await jsm.streams.getMessage(stream, { seq: info.state.last_seq });
    t.equal(last.header.get('Chat-Log'), log.log, `${stream}'s events carry their log's id`);
  }
});
