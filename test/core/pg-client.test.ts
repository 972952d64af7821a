/**
 * The pool's pg client (src/db/pg-client.ts): a transaction's BEGIN rides with its first statement,
 * and so does a statement marked to ride with the next (ridesWithNext). Transactions keep their
 * meaning (one snapshot and one start time, rollback on error) with fewer round trips. PostgreSQL
 * only (the embedded backend has no wire protocol).
 */
import t from 'tap';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PreparingClient } from '../../src/db/pg-client.js';
import { ridesWithNext, runPrepared } from '../../src/db/prepared.js';

const url = process.env.TEST_DATABASE_URL;
if (!url) {
  t.pass('PostgreSQL only (TEST_DATABASE_URL unset)');
} else {
  const pool = new pg.Pool({ connectionString: url, max: 1, Client: PreparingClient });
  let roundTrips = 0;
  pool.on('connect', (client) => (client as unknown as { connection: pg.Connection }).connection.on('readyForQuery', () => roundTrips++));
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  t.teardown(() => db.destroy());
  const table = `pg_client_test_${process.pid}`;

  t.before(async () => {
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(table)} (id int PRIMARY KEY)`.execute(db);
  });
  t.teardown(async () => {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(db);
  });

  // A second prepared text (the value cast): its first Parse is the one a failure skips.
  const castId = (id: number) => sql`${id}::int`;

  const counted = async <T>(work: () => Promise<T>): Promise<{ value: T; trips: number }> => {
    const before = roundTrips;
    const value = await work();
    return { value, trips: roundTrips - before };
  };

  t.test('BEGIN goes with the first statement: one transaction, one round trip less', async (t) => {
    const { value, trips } = await counted(() => db.transaction().execute(async (trx) => {
      const first = await sql<{ started: Date; x: number }>`SELECT now() AS started, ${7}::int AS x`.execute(trx);
      await sql`SELECT pg_sleep(0.02)`.execute(trx);
      const second = await sql<{ started: Date }>`SELECT now() AS started`.execute(trx);
      return { first: first.rows[0]!, second: second.rows[0]! };
    }));
    t.equal(value.first.x, 7, 'the first statement\'s own result, not the BEGIN\'s');
    t.equal(value.first.started.getTime(), value.second.started.getTime(), 'one transaction: now() is its start time');
    t.equal(trips, 4, 'first statement (with BEGIN), two more, COMMIT');
  });

  t.test('a prepared first statement carries the BEGIN too', async (t) => {
    const { value, trips } = await counted(() => db.transaction().execute(async (trx) => {
      const inserted = await runPrepared(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${1}) RETURNING id`);
      return inserted.rows;
    }));
    t.same(value, [{ id: 1 }]);
    t.equal(trips, 2);
  });

  t.test('an error in the first statement rolls the transaction back', async (t) => {
    await t.rejects(db.transaction().execute(async (trx) => {
      await sql`SELECT 1 / ${0}::int`.execute(trx);
    }), /division by zero/);
    await t.rejects(db.transaction().execute(async (trx) => {
      await sql`INSERT INTO ${sql.table(table)} (id) VALUES (${2})`.execute(trx);
      await sql`INSERT INTO ${sql.table(table)} (id) VALUES (${2})`.execute(trx);
    }), /duplicate key/);
    const rows = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} ORDER BY id`.execute(db);
    t.same(rows.rows, [{ id: 1 }], 'nothing of the failed transaction stays');
    const status = await sql<{ n: number }>`SELECT ${5}::int AS n`.execute(db);
    t.equal(status.rows[0]!.n, 5, 'the connection is usable, outside any transaction');
  });

  t.test('a parameterless first statement sends BEGIN on its own; an empty transaction sends nothing', async (t) => {
    const { value, trips } = await counted(() => db.transaction().execute(async (trx) => {
      const a = await sql<{ started: Date }>`SELECT now() AS started; `.execute(trx);
      await sql`SELECT pg_sleep(0.02)`.execute(trx);
      const b = await sql<{ started: Date }>`SELECT now() AS started`.execute(trx);
      return [a.rows[0]!.started.getTime(), b.rows[0]!.started.getTime()];
    }));
    t.equal(value[0], value[1], 'still one transaction');
    t.equal(trips, 5, 'BEGIN, three statements, COMMIT');
    const empty = await counted(() => db.transaction().execute(async () => 'nothing'));
    t.equal(empty.value, 'nothing');
    t.equal(empty.trips, 0, 'BEGIN and COMMIT of an empty transaction are not sent');
  });

  // Raises unless the row is absent: a guard of the kind a fold pass's claim is.
  const guardAbsent = (id: number) => sql`SELECT CASE WHEN EXISTS (SELECT 1 FROM ${sql.table(table)} WHERE id = ${id}) THEN 1 / 0 ELSE 0 END`;

  t.test('a statement riding with the next goes in its round trip, after the BEGIN and before it', async (t) => {
    const { value, trips } = await counted(() => db.transaction().execute(async (trx) => {
      const guard = await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${10}), (${11})`);
      const next = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE id >= ${10}`.execute(trx);
      return { guard: guard.rows, n: Number(next.rows[0]!.n) };
    }));
    t.same(value.guard, [], 'the rider\'s caller gets no rows');
    t.equal(value.n, 2, 'the next statement sees what the rider did: it ran first, in the same transaction');
    t.equal(trips, 2, 'BEGIN, rider and statement in one round trip; COMMIT');
  });

  t.test('a rider that fails stops the statement it rides with, and the transaction rolls back', async (t) => {
    let guardReturned = false;
    const failed = await counted(() => t.rejects(db.transaction().execute(async (trx) => {
      await ridesWithNext(trx, guardAbsent(10));
      guardReturned = true;
      await sql`INSERT INTO ${sql.table(table)} (id) VALUES (${13})`.execute(trx);
    }), /division by zero/, 'the statement fails with the rider\'s error'));
    t.ok(guardReturned, 'the rider itself returned at once');
    t.equal(failed.trips, 2, 'BEGIN, rider and statement in one round trip; ROLLBACK');
    const rows = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id = ${13}`.execute(db);
    t.same(rows.rows, [], 'the statement after the failed rider did not run');
    const status = await sql<{ n: number }>`SELECT ${5}::int AS n`.execute(db);
    t.equal(status.rows[0]!.n, 5, 'the connection is usable, outside any transaction');
  });

  t.test('a rider followed by nothing goes with the COMMIT; its failure fails the commit', async (t) => {
    const committed = await counted(() => db.transaction().execute(async (trx) => {
      await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${20})`);
    }));
    t.equal(committed.trips, 1, 'BEGIN, rider and COMMIT in one round trip');
    const kept = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id = ${20}`.execute(db);
    t.same(kept.rows, [{ id: 20 }], 'and committed');

    await t.rejects(db.transaction().execute(async (trx) => {
      await ridesWithNext(trx, guardAbsent(20));
    }), /division by zero/, 'the commit reports the rider\'s error');
    const status = await sql<{ n: number }>`SELECT ${6}::int AS n`.execute(db);
    t.equal(status.rows[0]!.n, 6, 'the failed transaction was rolled back: the connection is usable');

    const rolledBack = await counted(() => db.transaction().execute(async (trx) => {
      await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${21})`);
      throw new Error('changed my mind');
    }).catch((error: Error) => error.message));
    t.equal(rolledBack.value, 'changed my mind');
    t.equal(rolledBack.trips, 0, 'a rollback with nothing sent sends nothing');
    const gone = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id = ${21}`.execute(db);
    t.same(gone.rows, [], 'and the rider never ran');
  });

  t.test('a rider outside a transaction runs at once', async (t) => {
    await t.rejects(ridesWithNext(db, guardAbsent(20)), /division by zero/, 'alone: its own error');
    const alone = await ridesWithNext(db, sql`SELECT ${3}::int AS n`);
    t.same(alone.rows, [{ n: 3 }], 'and its own rows');
  });

  t.test('once the transaction is under way, riders are held for its next statement', async (t) => {
    const { value, trips } = await counted(() => db.transaction().execute(async (trx) => {
      await sql`SELECT ${1}::int`.execute(trx);
      const a = await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${30})`);
      const b = await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${31})`);
      const seen = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE id IN (${30}, ${31})`.execute(trx);
      await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${32})`);
      return { rows: [...a.rows, ...b.rows], seen: Number(seen.rows[0]!.n) };
    }));
    t.same(value.rows, [], 'riders\' callers get no rows');
    t.equal(value.seen, 2, 'the next statement sees both riders: they ran before it, in order');
    t.equal(trips, 3, 'first statement (with BEGIN); two riders with the count; the last rider with the COMMIT');
    const kept = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id BETWEEN ${30} AND ${32} ORDER BY id`.execute(db);
    t.same(kept.rows, [{ id: 30 }, { id: 31 }, { id: 32 }], 'all committed');

    const failed = await counted(() => db.transaction().execute(async (trx) => {
      await sql`SELECT ${1}::int`.execute(trx);
      await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${33})`);
      await ridesWithNext(trx, guardAbsent(30));
    }).catch((error: Error) => error.message));
    t.match(failed.value, /division by zero/, 'a held rider\'s failure fails the COMMIT it rides with');
    t.equal(failed.trips, 3, 'first statement; riders and COMMIT; ROLLBACK');
    const none = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id = ${33}`.execute(db);
    t.same(none.rows, [], 'and nothing of that transaction stays');
  });

  t.test('a prepared rider is parsed once per connection, also when it rides', async (t) => {
    const insert = (trx: typeof db, id: number) => ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${id})`, { prepared: true });
    const parses: Array<string | undefined> = [];
    const client = await pool.connect();
    const connection = (client as unknown as { connection: pg.Connection & { parse(c: { name?: string }): void } }).connection;
    const parse = connection.parse.bind(connection);
    connection.parse = (config) => {
      parses.push(config.name);
      parse(config);
    };
    client.release();
    try {
      for (const id of [40, 41, 42]) {
        const { trips } = await counted(() => db.transaction().execute((trx) => insert(trx, id)));
        t.equal(trips, 1, `transaction ${id - 39}: BEGIN, rider and COMMIT in one round trip`);
      }
      const named = parses.filter((name) => !!name);
      t.equal(named.length, 1, 'the rider\'s text was parsed under its name once');
      t.equal(new Set(named).size, 1);
      // A failure before a prepared rider: the rider was never parsed, and is parsed (once) next time.
      const before = parses.length;
      await t.rejects(db.transaction().execute(async (trx) => {
        await ridesWithNext(trx, guardAbsent(40));
        await ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${castId(43)})`, { prepared: true });
      }), /division by zero/);
      await db.transaction().execute((trx) => ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${castId(43)})`, { prepared: true }));
      await db.transaction().execute((trx) => ridesWithNext(trx, sql`INSERT INTO ${sql.table(table)} (id) VALUES (${castId(44)})`, { prepared: true }));
      const after = parses.slice(before).filter((name) => !!name && name !== named[0]);
      t.equal(after.length, 2, 'its Parse in the failed write (skipped there), once more in the next, then no more');
      const rows = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE id BETWEEN ${40} AND ${44} ORDER BY id`.execute(db);
      t.same(rows.rows, [{ id: 40 }, { id: 41 }, { id: 42 }, { id: 43 }, { id: 44 }], 'every committed rider\'s row is there, once');
    } finally {
      connection.parse = parse;
    }
  });
}
