import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely, QueryResult, RawBuilder } from 'kysely';

/**
 * Server-side prepared statements for hot statements of a fixed text (values only in parameters):
 * PostgreSQL parses and plans them once per connection instead of on every call. Planning a fold
 * statement often took longer than running it. The mark is an SQL comment, so the embedded backend
 * (no wire protocol) and any other client run the statement unchanged.
 */
export const PREPARED_MARK = '/* prepared */ ';

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
