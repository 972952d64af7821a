import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, Role, testConfig } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { entryPointArgs, repoRoot } from '../helpers/repo-root.js';
import { allProjections } from '../../projections/index.js';
import { createPlatform } from '../../src/platform.js';
import { tableChecksums, type TableChecksum } from '../../src/read/checksums.js';
import { replayInto, parseReplayPoint, targetConfig } from '../../src/cli/replay.js';
import { replayCommand } from '../../src/cli/commands.js';
import { buildServer } from '../../src/build-server.js';
import type { Config } from '../../src/config.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const tables = allProjections.flatMap((p) => p.tables);

async function checksumsOf(config: Config): Promise<{ sums: TableChecksum[]; head: number }> {
  const p = await createPlatform({ ...config, natsUrl: undefined }, { projections: allProjections, startWorkers: false });
  try {
    return { sums: await tableChecksums(p.db, tables), head: (await p.store.head()).position };
  } finally {
    await p.close();
  }
}

t.test('replay --until a past position equals the state observed at that moment', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'replay-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'history', [bob]);
  const m1 = await sendStream(s, alice, sid, 'then', 'as it was');
  await s.api('POST', `/messages/${m1}/reactions`, bob, { emoji_name: 'tada' });

  // The moment an auditor will ask about: the read tables as they are now, at position P.
  const head = (await s.platform.store.head()).position;
  t.ok(await s.platform.waitForProjections(head));
  const observed = await tableChecksums(s.platform.db, tables);
  t.equal((await s.platform.store.head()).position, head, 'nothing was appended while observing');
  const observedMessage = await s.api('GET', `/messages/${m1}`, alice);

  // History goes on: edits, a deletion, new users and channels.
  await s.api('PATCH', `/messages/${m1}`, alice, { content: 'rewritten later' });
  const m2 = await sendStream(s, bob, sid, 'then', 'later words');
  await s.api('DELETE', `/messages/${m2}`, s.owner);
  await s.user(Role.GUEST, 'Later');
  await createChannel(s, bob, 'newer', [alice]);
  t.ok((await s.platform.store.head()).position > head + 3);
  const now = await tableChecksums(s.platform.db, tables);
  t.not(JSON.stringify(now), JSON.stringify(observed), 'the live state moved on');

  // Replay into a separate embedded database, reading the running server's log.
  const target = targetConfig(await testConfig(), path.join(dir, 'at-p'));
  const lines: string[] = [];
  const report = await replayInto(s.platform.db, target, allProjections, parseReplayPoint(String(head)), (l) => lines.push(l));
  t.equal(report.position, head);
  t.equal(report.events, head);
  t.match(lines[lines.length - 1], new RegExp(`up to position ${head}`));
  const replayed = await checksumsOf(target);
  t.equal(replayed.head, head);
  t.same(replayed.sums, observed, 'every read table equals what was observed at P');

  // The replayed database serves the past: the message reads as it did then.
  const past = await buildServer({ ...target, rateLimitPerMinute: 0 }, { projections: allProjections });
  t.teardown(() => past.close());
  const aliceRow = await past.platform.db.selectFrom('users').select(['delivery_email', 'api_key']).where('id', '=', alice.id).executeTakeFirstOrThrow();
  const got = await past.fastify.inject({
    method: 'GET',
    url: `/api/v1/messages/${m1}`,
    headers: { authorization: `Basic ${Buffer.from(`${aliceRow.delivery_email}:${aliceRow.api_key}`).toString('base64')}` },
  });
  t.equal(got.statusCode, 200);
  t.equal(got.json().message.content, observedMessage.body.message.content);
  t.equal(got.json().message.reactions.length, 1);
  await past.close();

  // A non-empty target is refused; the live server was not disturbed.
  await t.rejects(replayInto(s.platform.db, target, allProjections, { position: head }, () => {}), /empty target/);
  t.same(await tableChecksums(s.platform.db, tables), now, 'the live read tables are untouched');
  t.equal((await s.api('POST', '/messages', alice, { type: 'stream', to: String(sid), topic: 'after', content: 'still serving' })).status, 200);
});

t.test('replay CLI: --until an ISO time, from the configured database into a new one', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'replay-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const source = { ...(await testConfig()), dataDir: path.join(dir, 'source'), rateLimitPerMinute: 0 };
  const server = await buildServer(source, { projections: allProjections });
  let closed = false;
  t.teardown(() => (closed ? undefined : server.close()));
  const owner = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const auth = `Basic ${Buffer.from(`${owner.delivery_email}:${owner.api_key}`).toString('base64')}`;
  const subscribe = (name: string) =>
    server.fastify.inject({
      method: 'POST',
      url: '/api/v1/users/me/subscriptions',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `subscriptions=${encodeURIComponent(JSON.stringify([{ name }]))}`,
    });
  t.equal((await subscribe('before the cut')).statusCode, 200);
  const head = (await server.platform.store.head()).position;
  const observed = await tableChecksums(server.platform.db, tables);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const cut = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await subscribe('after the cut')).statusCode, 200);

  // The embedded database is one process's: the CLI runs once the server is stopped. On
  // PostgreSQL it reads the log while the server keeps running.
  if (!source.databaseUrl) {
    closed = true;
    await server.close();
  }
  const targets = [path.join(dir, 'target')];
  if (source.databaseUrl) targets.push((await testConfig()).databaseUrl!);
  for (const database of targets) {
    const lines: string[] = [];
    const report = await replayCommand(source, allProjections, (l) => lines.push(l), { until: cut, database });
    t.equal(report.position, head, `${database.startsWith('postgres') ? 'PostgreSQL' : 'embedded'} target: the prefix up to the time`);
    const replayed = await checksumsOf(targetConfig(source, database));
    t.same(replayed.sums, observed, 'read tables as they were at that time');
  }
  // The same through the command line.
  const cli = await run(process.execPath, [...entryPointArgs('src/cli/main'), 'replay', '--until', String(head), '--database', path.join(dir, 'by-cli')], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: source.dataDir, DATABASE_URL: source.databaseUrl ?? '', NATS_URL: '' },
  });
  t.match(cli.stdout, new RegExp(`replayed ${head} events up to position ${head}`));
  t.same((await checksumsOf(targetConfig(source, path.join(dir, 'by-cli')))).sums, observed, 'the CLI builds the same tables');

  await t.rejects(replayCommand(source, allProjections, () => {}, { until: 'last tuesday', database: path.join(dir, 'x') }), /ISO 8601/);
  await t.rejects(
    replayCommand(source, allProjections, () => {}, { until: '1', database: source.databaseUrl ?? source.dataDir }),
    /another database/,
  );
});
