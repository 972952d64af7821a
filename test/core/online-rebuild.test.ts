import t from 'tap';
import { sql } from 'kysely';
import { startTestServer, Role, type TestServer } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { onlineRebuildCommand } from '../../src/cli/commands.js';
import type { OnlineRebuildReport } from '../../src/projection-runner.js';
import { SHADOW_SCHEMA, analyzeGrownTables } from '../../src/online-rebuild.js';
import { startTestPlatform } from '../helpers/platform.js';
import { createPlatform } from '../../src/platform.js';

const tables = allProjections.flatMap((p) => p.tables);

async function indexNames(s: TestServer): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT tablename || '.' || indexname AS name FROM pg_indexes
    WHERE schemaname = 'public' AND tablename = ANY(${tables}::text[]) ORDER BY 1`.execute(s.platform.db);
  return rows.map((r) => r.name);
}

/**
 * On PostgreSQL the rebuild runs as the CLI does, from its own platform beside the serving one; the
 * embedded database is one process's, so there the serving process runs it itself.
 */
async function rebuildOnline(
  s: TestServer,
  options: { only?: string[]; batchSize?: number; onProgress?: (position: number) => Promise<void> },
): Promise<OnlineRebuildReport> {
  if (!s.platform.config.databaseUrl) return s.platform.projections.rebuildOnline(options);
  if (!options.onProgress) return onlineRebuildCommand(s.platform.config, allProjections, () => {}, options);
  const cli = await createPlatform(s.platform.config, { projections: allProjections, startWorkers: false });
  try {
    return await cli.projections.rebuildOnline(options);
  } finally {
    await cli.close();
  }
}

t.test('rebuild --online under concurrent writes and reads: no failed request, same result as a full rebuild', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'busy', [bob]);
  for (let i = 0; i < 40; i++) await sendStream(s, i % 2 ? alice : bob, sid, `topic ${i % 4}`, `seed ${i}`);
  const edited = await sendStream(s, bob, sid, 'edits', 'version 0');
  const indexesBefore = await indexNames(s);

  // A fold bug left a wrong row behind: the rebuild must repair it.
  await s.platform.db.updateTable('users').set({ full_name: 'CORRUPTED' }).where('id', '=', alice.id).execute();
  t.equal((await s.api('GET', `/users/${alice.id}`, bob)).body.user.full_name, 'CORRUPTED');

  let rebuilding = true;
  const failures: string[] = [];
  let duringRebuild = 0;
  let completed = 0;
  const check = (what: string, response: { status: number; body: unknown }) => {
    if (response.status !== 200) failures.push(`${what}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
    completed += 1;
    if (rebuilding) duringRebuild += 1;
  };
  const writer = async () => {
    for (let i = 1; rebuilding || i <= 3; i++) {
      check('send', await s.api('POST', '/messages', alice, { type: 'stream', to: String(sid), topic: 'live', content: `live ${i}` }));
      // Repeated edits of one message: each reads the message's version from the read tables.
      check('edit', await s.api('PATCH', `/messages/${edited}`, bob, { content: `version ${i}` }));
      const read = await s.api('GET', `/messages/${edited}`, alice, { apply_markdown: false });
      check('read own edit', read);
      if (read.body.message?.content !== `version ${i}`) failures.push(`read-your-writes: saw ${read.body.message?.content}, wrote version ${i}`);
      check('react', await s.api('POST', `/messages/${edited}/reactions`, alice, { emoji_name: 'tada' }));
      check('unreact', await s.api('DELETE', `/messages/${edited}/reactions`, alice, { emoji_name: 'tada' }));
    }
  };
  const reader = async () => {
    for (let i = 0; rebuilding || i < 3; i++) {
      check('messages', await s.api('GET', '/messages', bob, { anchor: 'newest', num_before: 20, num_after: 0 }));
      check('users', await s.api('GET', '/users', alice));
      check('register', await s.api('POST', '/register', bob, { event_types: ['message'] }));
    }
  };
  const load = Promise.all([writer(), reader()]);
  // Let the load start, then rebuild in small batches so that it interleaves with it.
  await new Promise((resolve) => setTimeout(resolve, 200));
  // After each batch of the shadow build, requests are answered before the next one: the build and
  // the load interleave whatever the machine's speed.
  let batches = 0;
  const report = await rebuildOnline(s, {
    batchSize: 10,
    onProgress: async () => {
      batches += 1;
      const target = completed + 2;
      for (const deadline = Date.now() + 20_000; completed < target && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 5));
    },
  });
  rebuilding = false;
  await load;

  t.same(failures, [], 'every request answered 200, and read its own writes');
  t.ok(batches >= 5, `${batches} shadow batches`);
  t.ok(duringRebuild >= 2 * batches, `${duringRebuild} requests answered while the rebuild ran`);
  t.ok(report.built > 0 && report.reached >= report.built);
  t.equal(report.projections.length, allProjections.length);
  t.comment(`switch folded ${report.tail} tail events with the projection lock held ${report.switchMs} ms`);

  t.equal((await s.api('GET', `/users/${alice.id}`, bob)).body.user.full_name, 'Alice', 'the wrong row was rebuilt from the log');
  t.same(await indexNames(s), indexesBefore, 'the swapped-in tables carry the original index names');
  const schema = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${SHADOW_SCHEMA}`.execute(s.platform.db);
  t.equal(Number(schema.rows[0]!.n), 0, 'no shadow schema left behind');

  // The swapped-in tables, kept current since, equal a full refold of the log.
  const head = (await s.platform.store.head()).position;
  t.ok(await s.platform.waitForProjections(head));
  const online = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), online, 'identical to an offline rebuild');
  const checkpoints = await s.platform.db.selectFrom('checkpoints').select(['name', 'position', 'version']).execute();
  for (const projection of allProjections) {
    const row = checkpoints.find((c) => c.name === projection.name);
    t.equal(row?.version, projection.version, `${projection.name} checkpoint keeps its version`);
  }
});

t.test('rebuild --online of one projection leaves the others alone', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const sid = await createChannel(s, alice, 'quiet', []);
  await sendStream(s, alice, sid, 't', 'hello');
  await s.platform.db.updateTable('users').set({ full_name: 'CORRUPTED' }).where('id', '=', alice.id).execute();
  await s.platform.db.updateTable('streams').set({ description: 'CORRUPTED' }).where('id', '=', sid).execute();

  const report = await rebuildOnline(s, { only: ['users'] });
  t.same(report.projections, ['users']);
  t.equal((await s.api('GET', `/users/${alice.id}`, alice)).body.user.full_name, 'Alice', 'users rebuilt');
  const stream = await s.platform.db.selectFrom('streams').select('description').where('id', '=', sid).executeTakeFirstOrThrow();
  t.equal(stream.description, 'CORRUPTED', 'channels not touched');
  t.equal((await s.api('POST', '/messages', alice, { type: 'stream', to: String(sid), topic: 't', content: 'after' })).status, 200);

  await t.rejects(rebuildOnline(s, { only: ['no-such-projection'] }), /unknown projection/);
  // An interrupted rebuild leaves its schema: the next one refuses until it is dropped.
  await sql`CREATE SCHEMA ${sql.id(SHADOW_SCHEMA)}`.execute(s.platform.db);
  await t.rejects(rebuildOnline(s, { only: ['users'] }), /another online rebuild is running/);
  await sql`DROP SCHEMA ${sql.id(SHADOW_SCHEMA)}`.execute(s.platform.db);
  t.equal((await rebuildOnline(s, { only: ['users'] })).projections[0], 'users');
});

t.test('a rebuild analyzes shadow tables as they double, so plans made mid-rebuild see their real size', async (t) => {
  const p = await startTestPlatform(t, []);
  await p.db.transaction().execute(async (trx) => {
    await sql`CREATE SCHEMA ${sql.id(SHADOW_SCHEMA)}`.execute(trx);
    await sql`CREATE TABLE ${sql.id(SHADOW_SCHEMA, 'grows')} (id int PRIMARY KEY, pad text)`.execute(trx);
    const stats = async () => Number((await sql<{ n: number }>`SELECT reltuples::int8 AS n FROM pg_class WHERE oid = ${`${SHADOW_SCHEMA}.grows`}::regclass`.execute(trx)).rows[0]!.n);
    const fill = (from: number, to: number) => sql`INSERT INTO ${sql.id(SHADOW_SCHEMA, 'grows')} SELECT i, repeat('x', 200) FROM generate_series(${from}::int, ${to}::int) AS i`.execute(trx);
    await fill(1, 100);
    let analyzed = await analyzeGrownTables(trx, new Map());
    t.equal(analyzed.size, 0, 'a small table is left alone');
    await fill(101, 3000);
    analyzed = await analyzeGrownTables(trx, analyzed);
    t.ok(analyzed.has('grows'), 'analyzed once it is big enough');
    t.equal(await stats(), 3000, 'the planner now knows its rows');
    await fill(3001, 4000);
    const again = await analyzeGrownTables(trx, analyzed);
    t.equal(again.get('grows'), analyzed.get('grows'), 'not again before it doubles');
    await fill(4001, 7000);
    t.ok((await analyzeGrownTables(trx, again)).get('grows')! > analyzed.get('grows')!, 'and again once it has');
    t.equal(await stats(), 7000);
    await sql`DROP SCHEMA ${sql.id(SHADOW_SCHEMA)} CASCADE`.execute(trx);
  });
});
