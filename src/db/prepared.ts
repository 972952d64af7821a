import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely, QueryResult, RawBuilder } from 'kysely';

/**
 * Server-side prepared statements for hot statements of a fixed text (values only in parameters):
 * PostgreSQL parses and plans them once per connection instead of on every call. Planning a fold
 * statement often took longer than running it. The mark is an SQL comment, so the embedded backend
 * (no wire protocol) and any other client run the statement unchanged.
 */
export const PREPARED_MARK = '/* prepared */ ';

/**
 * A statement inside a transaction whose caller needs no rows from it may ride with the
 * transaction's next statement, the COMMIT included, in one round trip (src/db/pg-client.ts). It
 * gets no rows back, and must report failure by raising an error, which the next statement then
 * fails with. Outside a transaction, and on the embedded backend, it runs at once, the same statement.
 */
export const RIDES_WITH_NEXT_MARK = '/* rides with next */ ';

/**
 * Runs `query` as a statement that may ride with the next one of its transaction
 * (RIDES_WITH_NEXT_MARK); `prepared`: also a prepared statement, under runPrepared's rules.
 */
export function ridesWithNext(db: Kysely<any>, query: RawBuilder<unknown>, options: { prepared?: boolean } = {}): Promise<QueryResult<unknown>> {
  const compiled = query.compile(db);
  const mark = RIDES_WITH_NEXT_MARK + (options.prepared ? PREPARED_MARK : '');
  return db.executeQuery({ ...compiled, sql: mark + compiled.sql } as CompiledQuery<unknown>);
}

const names = new Map<string, string>();

/** The statement's name on a connection: one per distinct text (remembered: hashing it was 1.6% of a history read's CPU). */
export function preparedName(text: string): string {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`));
  return name;
}

/**
 * Runs `query` as a prepared statement. Its compiled text must not depend on the values (no
 * lists spliced into the text): each distinct text stays prepared on every connection for good.
 * PostgreSQL soon settles on one generic plan per statement, made with the statistics of that
 * moment: keep to statements whose plan cannot go wrong as tables grow (lookups and updates by key,
 * inserts). A join of a parameter list with a growing table is not one: planned while the table
 * was small, it scanned the table whole on every call.
 */
export function runPrepared<R>(db: Kysely<any>, query: Compilable<R> | RawBuilder<R>): Promise<QueryResult<R>> {
  // A query builder compiles on its own; a raw `sql` template needs the executor.
  const compiled = (query as RawBuilder<R>).compile(db);
  return db.executeQuery({ ...compiled, sql: PREPARED_MARK + compiled.sql } as CompiledQuery<R>);
}

/** Stands in for a value in a query compiled once (preparedTemplate); no caller's value looks like it. */
const standIn = (i: number) => `\u0000value ${i}\u0000`;

/**
 * A prepared statement (runPrepared's rules) built and compiled once: `build` gets a stand-in
 * for each value that changes from call to call (to be passed to the query as it is, never
 * computed with), and each call puts its own values in their places. Building and compiling a
 * query with subqueries cost about as much server time as the database spent running it (a
 * look-up by key), on every call.
 */
export function preparedTemplate<V extends unknown[], R>(build: (db: Kysely<any>, ...values: V) => Compilable<R>): (db: Kysely<any>, ...values: V) => Promise<QueryResult<R>> {
  let template: { query: CompiledQuery<R>; slots: Array<number | undefined> } | undefined;
  return async (db, ...values) => {
    if (template === undefined) {
      const standIns = values.map((_, i) => standIn(i));
      // Compiled by the first caller's database: a process runs on one kind (both speak PostgreSQL's SQL).
      const compiled = build(db, ...(standIns as V)).compile();
      const slots = compiled.parameters.map((parameter) => {
        const slot = standIns.indexOf(parameter as string);
        return slot === -1 ? undefined : slot;
      });
      for (let i = 0; i < standIns.length; i++) {
        if (!slots.includes(i)) throw new Error(`preparedTemplate: value ${i} is not a parameter of the statement`);
      }
      template = { query: { ...compiled, sql: PREPARED_MARK + compiled.sql }, slots };
    }
    const { query, slots } = template;
    const parameters = query.parameters.map((parameter, i) => (slots[i] === undefined ? parameter : values[slots[i]!]));
    return db.executeQuery({ ...query, parameters } as CompiledQuery<R>);
  };
}
