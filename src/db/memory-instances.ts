import type { PGlite } from '@electric-sql/pglite';

/*
 * In-memory databases (tests, benchmarks) are reused within a process. Loading the migrated
 * template into a new PGlite instance costs about a second of CPU (the 40 MB data directory and
 * PostgreSQL's share files are written into its in-memory file system, then PostgreSQL starts);
 * emptying a closed instance costs about 0.15 s. An instance is reused only when its schema,
 * triggers, functions and log identity are exactly the template's after emptying: one a test has
 * altered (a trigger disabled to tamper with the log, a table dropped) is closed instead.
 */

/** Tables whose rows come with the template (the migration history and the log's identity). */
const TEMPLATE_ROWS = new Set(['kysely_migration', 'kysely_migration_lock', 'log_identity']);

/*
 * An open instance made from a loaded data directory keeps the process alive, so a spare that no
 * server takes within IDLE_MS is closed: a test file's next server usually starts at once, and the
 * process can exit soon after its last one.
 */
const IDLE_MS = 500;
const spare: Array<{ pglite: PGlite; idle: NodeJS.Timeout }> = [];

/** A spare instance, emptied back to the template, if one is free. */
export function takeSpareInstance(): PGlite | undefined {
  const taken = spare.pop();
  if (taken) clearTimeout(taken.idle);
  return taken?.pglite;
}

function keepSpare(pglite: PGlite): void {
  const entry = {
    pglite,
    idle: setTimeout(() => {
      spare.splice(spare.indexOf(entry), 1);
      void pglite.close().catch(() => undefined);
    }, IDLE_MS),
  };
  spare.push(entry);
}

/** What a fresh instance from the template looks like, and the statement that empties one back to it. */
let template: { fingerprint: string; emptying: string } | undefined;

/** Records the template's fingerprint and emptying statement from a fresh instance; called before its first use. */
export async function rememberTemplate(pglite: PGlite): Promise<void> {
  template ??= { fingerprint: await fingerprint(pglite), emptying: await emptyingStatement(pglite) };
}

/** Empties a closed server's instance and keeps it for the next one, or closes it when it cannot be trusted to equal the template. */
export async function recycleInstance(pglite: PGlite): Promise<void> {
  try {
    if (template === undefined) throw new Error('no template to compare with');
    // A server stopped mid-transaction leaves it open; ROLLBACK outside one only warns.
    await pglite.exec('ROLLBACK');
    // Session state: prepared statements, advisory locks, temporary tables, settings, LISTENs.
    await pglite.exec('DISCARD ALL');
    // A table a test dropped makes this fail; one it added or altered changes the fingerprint.
    await pglite.exec(template.emptying);
    if ((await fingerprint(pglite)) !== template.fingerprint) throw new Error('the schema differs from the template');
    keepSpare(pglite);
  } catch {
    await pglite.close().catch(() => undefined);
  }
}

/**
 * Every table emptied (but the template's own rows) and every sequence restarted, in one transaction.
 * The log's tables refuse TRUNCATE through triggers; replica mode skips ordinary triggers.
 */
async function emptyingStatement(pglite: PGlite): Promise<string> {
  const { rows: tables } = await pglite.query<{ name: string }>(
    `SELECT quote_ident(relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  const emptied = tables.map((table) => table.name).filter((name) => !TEMPLATE_ROWS.has(name));
  const { rows: sequences } = await pglite.query<{ name: string }>(
    `SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`,
  );
  return [
    'BEGIN',
    'SET LOCAL session_replication_role = replica',
    ...(emptied.length > 0 ? [`TRUNCATE ${emptied.join(', ')} RESTART IDENTITY CASCADE`] : []),
    ...sequences.map((sequence) => `ALTER SEQUENCE ${sequence.name} RESTART`),
    'COMMIT',
  ].join(';\n');
}

/** A digest of what emptying cannot restore: relations, columns, triggers and their state, functions, the log identity, the migrations. */
async function fingerprint(pglite: PGlite): Promise<string> {
  const { rows } = await pglite.query<{ digest: string }>(`
    SELECT md5(string_agg(item, ',' ORDER BY item)) AS digest FROM (
      SELECT 'rel:' || n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || c.relnatts AS item
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
      UNION ALL SELECT 'col:' || attrelid::regclass::text || '.' || attname || ':' || atttypid::regtype::text || ':' || attnotnull
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
      UNION ALL SELECT 'trigger:' || tgrelid::regclass::text || '.' || tgname || ':' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL SELECT 'function:' || p.oid::regprocedure::text || ':' || md5(p.prosrc)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
      UNION ALL SELECT 'log:' || log_id::text FROM log_identity
      UNION ALL SELECT 'migrations:' || count(*) FROM kysely_migration
      UNION ALL SELECT 'role:' || rolname FROM pg_roles
    ) AS items`);
  return rows[0]!.digest;
}
