/**
 * Fold passes commit without waiting for the disk (docs/DECISIONS.md): a database crash can take
 * back the last ones, with their checkpoints. These tests take a pass back as such a crash would
 * (every read table and checkpoint as it stood before the pass) and tell the runner the connection
 * was lost: requests wait until the pass is folded again, so an acknowledged write never goes
 * missing from a read.
 */
import t from 'tap';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';

const readTables = [...new Set(allProjections.flatMap((p) => p.tables)), 'checkpoints'];
const copyOf = (table: string) => `lost_pass_${table}`;

/** Keeps a copy of every read table and the checkpoints. */
async function copyReadTables(db: Db): Promise<void> {
  for (const table of readTables) await sql`CREATE TABLE ${sql.table(copyOf(table))} AS SELECT * FROM ${sql.table(table)}`.execute(db);
}

/** Puts the copies back in one transaction, as a crash that lost every commit since would. */
async function takeBackToCopies(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of readTables) {
      const columns = await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${table} AND is_generated = 'NEVER' ORDER BY ordinal_position`.execute(trx);
      const list = sql.join(columns.rows.map((c) => sql.ref(c.column_name)));
      await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
      await sql`INSERT INTO ${sql.table(table)} (${list}) SELECT ${list} FROM ${sql.table(copyOf(table))}`.execute(trx);
      await sql`DROP TABLE ${sql.table(copyOf(table))}`.execute(trx);
    }
  });
}

t.test('a fold pass a database crash took back is folded again before any request reads', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  await sendStream(s, alice, general, 'one', 'first');
  const { db } = s.platform;
  const runner = s.platform.projections;
  const tables = allProjections.flatMap((p) => p.tables);

  await copyReadTables(db);
  const id = await sendStream(s, alice, general, 'two', 'second');
  const folded = await tableChecksums(db, tables);
  await takeBackToCopies(db);
  t.notOk(await db.selectFrom('messages').select('id').where('id', '=', id).executeTakeFirst(), 'the acknowledged message is gone from the read tables');
  t.ok(runner.readsReady, 'the process does not know yet');

  // A slow refold (as after a restart, under load): the read must wait for it, not race it.
  const kick = runner.kick.bind(runner);
  runner.kick = (head) => void setTimeout(() => kick(head), 300);
  runner.resync();
  t.notOk(runner.readsReady, 'after a lost connection, reads are held');
  const got = await s.api('GET', `/messages/${id}`, alice);
  t.equal(got.status, 200, 'the read waited for the refold');
  t.equal(got.body.message?.content, '<p>second</p>');
  t.ok(runner.readsReady, 'and reads are free again');
  t.same(await tableChecksums(db, tables), folded, 'the refold gives the tables the pass had made');

  const later = await sendStream(s, alice, general, 'three', 'third');
  t.equal((await s.api('GET', `/messages/${later}`, alice)).body.message.content, '<p>third</p>', 'and the worker keeps projecting');
});

t.test('a lost connection that lost nothing holds reads only until the checkpoints are read again', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  const id = await sendStream(s, alice, general, 'one', 'first');
  const runner = s.platform.projections;
  runner.resync();
  t.notOk(runner.readsReady);
  t.equal(await runner.untilReadsReady(5_000), true, 'ready after one pass');
  t.equal((await s.api('GET', `/messages/${id}`, alice)).status, 200);
});

t.test('while the worker cannot pass, health checks answer at once and other requests after a bounded wait', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const runner = s.platform.projections;
  const { kick } = runner;
  runner.kick = () => undefined;
  runner.resync();
  let started = Date.now();
  t.equal((await s.fastify.inject({ method: 'GET', url: '/health/live' })).statusCode, 200);
  t.ok(Date.now() - started < 1_000, 'the health check was not held');
  started = Date.now();
  t.equal((await s.api('GET', '/users/me', alice)).status, 200, 'a request is tried after the wait');
  const waited = Date.now() - started;
  t.ok(waited >= 2_900 && waited < 10_000, `held for the bounded wait (${waited} ms)`);
  runner.kick = kick;
  runner.kick();
  t.equal(await runner.untilReadsReady(5_000), true, 'ready once the worker passes');
});
