import t from 'tap';
import { sql } from 'kysely';
import { startTestPlatform } from '../helpers/platform.js';
import { preparedName, preparedTemplate, runPrepared } from '../../src/db/prepared.js';
import type { Db } from '../../src/db/database.js';

t.test('a statement run with runPrepared gives the same rows as a plain one, on either backend', async (t) => {
  const p = await startTestPlatform(t, []);
  await sql`CREATE TABLE prepared_probe (id int PRIMARY KEY, label text)`.execute(p.db);
  for (const [id, label] of [[1, 'one'], [2, 'two'], [3, 'three']] as const) {
    await runPrepared(p.db, p.db.insertInto('prepared_probe' as never).values({ id, label } as never));
  }
  const query = (min: number) => sql<{ id: number; label: string }>`SELECT id, label FROM prepared_probe WHERE id >= ${min} ORDER BY id`;
  for (const min of [1, 2, 3, 4]) {
    const prepared = await runPrepared(p.db, query(min));
    const plain = await query(min).execute(p.db);
    t.same(prepared.rows, plain.rows, `id >= ${min}`);
  }
  const ids = await runPrepared(p.db, sql<{ id: number }>`SELECT id FROM prepared_probe WHERE id = ANY(${[1, 3]}::int[]) ORDER BY id`);
  t.same(ids.rows.map((r) => r.id), [1, 3], 'a list travels as one array parameter');
});

t.test('on PostgreSQL the statement is prepared once per connection, and follows search_path', { skip: !process.env.TEST_DATABASE_URL && 'PostgreSQL only (TEST_DATABASE_URL)' }, async (t) => {
  const p = await startTestPlatform(t, []);
  await sql`CREATE TABLE prepared_probe (id int PRIMARY KEY, label text)`.execute(p.db);
  await sql`INSERT INTO prepared_probe VALUES (1, 'public')`.execute(p.db);
  await p.db.transaction().execute(async (trx) => {
    const query = sql<{ label: string }>`SELECT label FROM prepared_probe WHERE id = ${1}`;
    t.same((await runPrepared(trx, query)).rows, [{ label: 'public' }]);
    t.same((await runPrepared(trx, query)).rows, [{ label: 'public' }]);
    const { rows } = await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`.execute(trx);
    const text = `/* prepared */ ${query.compile(trx).sql}`;
    t.same(rows.filter((r) => r.statement === text).map((r) => r.name), [preparedName(text)], 'one prepared statement, under its name');
    // The rebuild folds into shadow tables by putting their schema first on search_path.
    await sql`CREATE SCHEMA prepared_shadow`.execute(trx);
    await sql`CREATE TABLE prepared_shadow.prepared_probe (id int PRIMARY KEY, label text)`.execute(trx);
    await sql`INSERT INTO prepared_shadow.prepared_probe VALUES (1, 'shadow')`.execute(trx);
    await sql`SELECT set_config('search_path', 'prepared_shadow, public', true)`.execute(trx);
    t.same((await runPrepared(trx, query)).rows, [{ label: 'shadow' }], 'the prepared statement now reads the shadow table');
    await sql`SELECT set_config('search_path', 'public', true)`.execute(trx);
    t.same((await runPrepared(trx, query)).rows, [{ label: 'public' }]);
    await sql`DROP SCHEMA prepared_shadow CASCADE`.execute(trx);
  });
});

t.test('a statement compiled once (preparedTemplate) takes each call\'s values, wherever and however often they appear', async (t) => {
  const p = await startTestPlatform(t, []);
  await sql`CREATE TABLE prepared_probe (id int PRIMARY KEY, owner int, label text)`.execute(p.db);
  await sql`INSERT INTO prepared_probe VALUES (1, 7, 'one'), (2, 8, 'two'), (3, 7, 'three')`.execute(p.db);
  let builds = 0;
  const build = (db: Db, owner: number, min: number) => {
    builds += 1;
    return db.selectFrom('prepared_probe' as never).select(['id' as never])
      .where(sql<boolean>`(owner = ${owner} OR id = ${owner}) AND id >= ${min} AND label <> ${'none'}`).orderBy('id' as never);
  };
  const template = preparedTemplate(build);
  for (const [owner, min] of [[7, 1], [7, 2], [8, 1], [2, 1], [9, 1]] as const) {
    const { rows } = await template(p.db, owner, min);
    const plain = await build(p.db, owner, min).execute();
    t.same(rows, plain, `owner ${owner}, id >= ${min}`);
  }
  t.same((await template(p.db, 7, 2)).rows, [{ id: 3 }], 'the values of this call, not of the first');
  t.equal(builds, 1 + 5, 'built once for the template (the others are the plain comparisons)');

  const spliced = preparedTemplate((db: Db, id: number) => db.selectFrom('prepared_probe' as never).select(['id' as never]).where(sql<boolean>`id = ${sql.lit(id)}`));
  await t.rejects(spliced(p.db, 1), /value 0 is not a parameter/, 'a value spliced into the text is refused');
});
