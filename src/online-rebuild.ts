import { sql } from 'kysely';
import type { Db } from './db/database.js';
import type { Trx } from './projections-api.js';

/**
 * Shadow tables for `rebuild --online` (see docs/OPERATIONS.md). The new read tables are built in
 * their own schema under the same names as the live ones; a fold transaction that puts this schema
 * first on its search_path makes every projection's unqualified `users`, `messages`... resolve to
 * the shadow copy, so the projections run unchanged. The log and the checkpoints stay in public.
 */
export const SHADOW_SCHEMA = 'projection_rebuild';

/** Creates the shadow schema with an empty copy of each table (columns, defaults, generated columns, checks, indexes). */
export async function createShadowTables(db: Db, tables: readonly string[]): Promise<void> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${SHADOW_SCHEMA}`.execute(db);
  if (Number(rows[0]!.n) > 0) {
    throw new Error(
      `schema ${SHADOW_SCHEMA} exists: another online rebuild is running, or one was interrupted (then drop it: DROP SCHEMA ${SHADOW_SCHEMA} CASCADE)`,
    );
  }
  await db.transaction().execute((trx) => createShadowTablesIn(trx, tables));
}

/** The same inside the caller's transaction (an offline rebuild builds and swaps in one transaction). */
export async function createShadowTablesIn(trx: Trx, tables: readonly string[]): Promise<void> {
  await sql`CREATE SCHEMA ${sql.id(SHADOW_SCHEMA)}`.execute(trx);
  for (const table of tables) {
    await sql`CREATE TABLE ${sql.id(SHADOW_SCHEMA, table)} (LIKE ${sql.id('public', table)} INCLUDING ALL)`.execute(trx);
  }
}

export async function dropShadowTables(db: Db): Promise<void> {
  await sql`DROP SCHEMA IF EXISTS ${sql.id(SHADOW_SCHEMA)} CASCADE`.execute(db);
}

/** Inside a fold transaction: unqualified table names now mean the shadow tables. */
export async function useShadowTables(trx: Trx): Promise<void> {
  await sql`SELECT set_config('search_path', ${`${SHADOW_SCHEMA}, public`}, true)`.execute(trx);
}

/**
 * Drops the shadow twins of `names` (live indexes that only queries use, never a fold: see
 * Projection.queryIndexes) and returns their definitions: building an index once over the filled
 * table costs far less than an entry per folded row.
 */
export async function deferIndexes(trx: Trx, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<{ schemaname: string; tablename: string; indexname: string; indexdef: string }>`
    SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname = ${SHADOW_SCHEMA} OR (schemaname = 'public' AND indexname IN (${sql.join(names)}))`.execute(trx);
  const key = (r: { tablename: string; indexdef: string }) => `${r.tablename} ${indexShape(r.indexdef)}`;
  const wanted = new Set(rows.filter((r) => r.schemaname === 'public').map(key));
  const twins = rows.filter((r) => r.schemaname === SHADOW_SCHEMA && wanted.has(key(r)));
  for (const twin of twins) await sql`DROP INDEX ${sql.id(SHADOW_SCHEMA, twin.indexname)}`.execute(trx);
  return twins.map((twin) => twin.indexdef);
}

/** Builds the indexes deferIndexes dropped (before the swap, which pairs them with the live ones). */
export async function buildDeferredIndexes(trx: Trx, definitions: readonly string[]): Promise<void> {
  if (definitions.length === 0) return;
  await sql`SELECT set_config('maintenance_work_mem', '256MB', true)`.execute(trx);
  for (const definition of definitions) await sql.raw(definition).execute(trx);
}

/** An index definition without its name and schema, to pair a shadow index with the live one it copies. */
function indexShape(indexdef: string): string {
  return indexdef.replace(/^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ /, 'CREATE $1INDEX ON ');
}

/**
 * Inside the switch transaction (projection lock held): each live table is dropped and its shadow
 * takes its place in public. Index names are set back to the live ones (LIKE generates its own),
 * so later migrations that name an index still find it. Nothing outside a projection's own tables
 * refers to them (no foreign keys, views or triggers), which is what makes the swap safe.
 */
export async function swapInShadowTables(trx: Trx, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    const { rows: indexes } = await sql<{ schemaname: string; indexname: string; indexdef: string }>`
      SELECT schemaname, indexname, indexdef FROM pg_indexes
      WHERE tablename = ${table} AND schemaname IN ('public', ${SHADOW_SCHEMA})`.execute(trx);
    const live = indexes.filter((i) => i.schemaname === 'public');
    const shadow = indexes.filter((i) => i.schemaname === SHADOW_SCHEMA);
    await sql`DROP TABLE ${sql.id('public', table)}`.execute(trx);
    await sql`ALTER TABLE ${sql.id(SHADOW_SCHEMA, table)} SET SCHEMA public`.execute(trx);
    const unmatched = [...shadow];
    const renames: Array<{ from: string; to: string }> = [];
    for (const old of live) {
      const i = unmatched.findIndex((s) => indexShape(s.indexdef) === indexShape(old.indexdef));
      if (i < 0) continue;
      const [twin] = unmatched.splice(i, 1);
      if (twin!.indexname !== old.indexname) renames.push({ from: twin!.indexname, to: old.indexname });
    }
    // Two steps, so that no rename collides with a name another shadow index still holds.
    // Renaming a constraint's index renames the constraint too (primary keys, unique constraints).
    for (const [n, r] of renames.entries()) await sql`ALTER INDEX ${sql.id('public', r.from)} RENAME TO ${sql.id(`${SHADOW_SCHEMA}_${n}`)}`.execute(trx);
    for (const [n, r] of renames.entries()) await sql`ALTER INDEX ${sql.id('public', `${SHADOW_SCHEMA}_${n}`)} RENAME TO ${sql.id(r.to)}`.execute(trx);
  }
  await sql`DROP SCHEMA ${sql.id(SHADOW_SCHEMA)}`.execute(trx);
}

/**
 * Statistics for tables filled inside one long transaction (autovacuum cannot see them): ANALYZE
 * each shadow table whenever it has doubled in size since it was last analyzed. Without it the
 * planner keeps treating them as the empty tables they started as, and a statement planned once
 * (a prepared statement's generic plan) keeps a plan for a tiny table: a reaction fold that scanned
 * the whole messages table took 20 ms instead of 0.1. Returns the sizes to pass next time.
 */
export async function analyzeGrownTables(trx: Trx, analyzedAt: ReadonlyMap<string, number>): Promise<Map<string, number>> {
  const { rows } = await sql<{ name: string; bytes: number }>`
    SELECT c.relname AS name, pg_relation_size(c.oid)::int8 AS bytes FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${SHADOW_SCHEMA} AND c.relkind = 'r'`.execute(trx);
  const next = new Map(analyzedAt);
  for (const { name, bytes } of rows) {
    const before = analyzedAt.get(name) ?? 0;
    if (Number(bytes) < 2 * Math.max(before, MIN_ANALYZE_BYTES)) continue;
    await sql`ANALYZE ${sql.id(SHADOW_SCHEMA, name)}`.execute(trx);
    next.set(name, Number(bytes));
  }
  return next;
}

/** Below this a table is small enough that any plan is cheap. */
const MIN_ANALYZE_BYTES = 256 * 1024;
