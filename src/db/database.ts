import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import type { Database } from './schema.js';
import { PGlitePool } from './pglite-pool.js';
import { PreparingClient } from './pg-client.js';
import { loadSharedTemplate, saveSharedTemplate } from './memory-template.js';
import { recycleInstance, rememberTemplate, takeSpareInstance } from './memory-instances.js';

// int8 columns (positions, ids) stay well inside 2^53; read them as numbers on both backends.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** True when the database was loaded from a migrated template: every migration is already applied. */
  fromMigratedTemplate?: boolean;
  /** The embedded instance, when kind is 'pglite'. */
  pglite?: PGlite;
  /**
   * Runs a server-side prepared statement (parsed and planned once per connection), for the few
   * hot statements where that matters. Only on PostgreSQL; the embedded backend has no wire protocol.
   */
  namedQuery?: NamedQuery;
  /**
   * Called when the server drops a connection (a restart, a crash): whatever a process remembers
   * about the database's state may since have been lost with it.
   */
  onConnectionLost(listener: () => void): void;
  close(): Promise<void>;
}

export type NamedQuery = <Row>(name: string, text: string, values: unknown[]) => Promise<Row[]>;

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Directory for the embedded database; undefined means in memory. */
  dataDir?: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 20, Client: PreparingClient });
    const lostListeners: Array<() => void> = [];
    const connectionLost = () => {
      for (const listener of lostListeners) listener();
    };
    // A dropped connection must not crash the process; the pool replaces it.
    pool.on('error', connectionLost);
    // The pool only listens on idle clients: a checked-out one (a worker's long-held connection)
    // that the server terminates would emit an unhandled 'error'. Its pending query rejects anyway.
    pool.on('connect', (client) => client.on('error', connectionLost));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const namedQuery: NamedQuery = async <Row>(name: string, text: string, values: unknown[]) =>
      (await pool.query({ name, text, values })).rows as Row[];
    return { db, kind: 'postgres', namedQuery, onConnectionLost: (listener) => lostListeners.push(listener), close: () => db.destroy() };
  }
  let pglite: PGlite;
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    pglite = await openEmbeddedDirectory(options.dataDir);
  } else {
    memoryTemplate ??= loadSharedTemplate();
    const spare = memoryTemplate ? takeSpareInstance() : undefined;
    pglite = spare ?? await PGlite.create({ ...(await compiledModules()), startParams: EMBEDDED_START_PARAMS, ...(memoryTemplate ? { loadDataDir: memoryTemplate } : {}) });
    if (memoryTemplate && !spare) await rememberTemplate(pglite);
  }
  const fromMigratedTemplate = !options.dataDir && memoryTemplate !== undefined;
  // An in-memory instance made from the template goes back to the spares when its server closes.
  const pool = new PGlitePool(pglite, fromMigratedTemplate ? recycleInstance : undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
  return { db, kind: 'pglite', pglite, fromMigratedTemplate, onConnectionLost: () => undefined, close: () => db.destroy() };
}

/*
 * PGlite starts PostgreSQL with its default 128 MB of shared buffers and touches all of them at start:
 * about 130 MiB of the process's resident memory before the first query. The embedded database is one
 * process's own (no other backend shares its cache) and reads its files through the operating system's
 * page cache, so 16 MB is enough; measured on a migrated data directory: 304 MiB RSS at 128 MB, 154 at
 * 16 MB, 153 at 8 MB, and 20% less CPU to start an instance.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/*
 * PGlite's WebAssembly (PostgreSQL) is compiled by V8's baseline compiler only. By default V8 recompiles
 * the functions that turn hot with its optimizing compiler, in background threads, and keeps both
 * codes: on a restarted embedded server that was about 60 MiB of resident memory (192 MiB at rest
 * against 242-269) and 0.3 s more to ready, for sends no faster (8 HTTP senders: 609-693 msg/s
 * against 620-715 in alternating runs); a test process, which starts many instances, ran about 20%
 * faster. It has to be set before the module is compiled; it concerns WebAssembly only, and PGlite
 * is the only WebAssembly this server loads. PostgreSQL proper (DATABASE_URL) never comes here.
 */
function compileWasmWithBaselineOnly(): void {
  v8.setFlagsFromString('--liftoff-only');
}

/*
 * In-memory databases (tests) start from a template: PGlite's WebAssembly is compiled once per
 * process, and a migrated empty database is dumped once (kept on disk for the next processes) and
 * loaded by the next ones, skipping initdb and the migrations (about 4x faster than a fresh instance).
 */
let modules: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined;
let memoryTemplate: Blob | undefined;

function compiledModules() {
  modules ??= (async () => {
    compileWasmWithBaselineOnly();
    const dist = path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '');
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(readFileSync(path.join(dist, 'pglite.wasm'))),
      WebAssembly.compile(readFileSync(path.join(dist, 'initdb.wasm'))),
    ]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([readFileSync(path.join(dist, 'pglite.data'))]) };
  })();
  return modules;
}

/** Keeps a freshly migrated in-memory database as the template for the next ones in this process. */
export async function rememberMemoryTemplate(handle: DatabaseHandle): Promise<void> {
  if (memoryTemplate || !handle.pglite) return;
  memoryTemplate = (await handle.pglite.dumpDataDir('none')) as Blob;
  await saveSharedTemplate(memoryTemplate);
}

async function openEmbeddedDirectory(dir: string): Promise<PGlite> {
  compileWasmWithBaselineOnly();
  const pgdata = `${dir}/pgdata`;
  const fresh = !existsSync(`${pgdata}/PG_VERSION`);
  const open = () => PGlite.create(pgdata, { startParams: EMBEDDED_START_PARAMS });
  try {
    const pglite = await open();
    if (!fresh) return pglite;
    // The instance that ran initdb keeps initdb's memory (about 450 MiB resident) for as long as it
    // lives: a first start opens the new directory again, as every later start does.
    await pglite.close();
    return await open();
  } catch (error) {
    throw new Error(
      `cannot open the embedded database in ${dir}/pgdata (is a server using it?): ${(error as Error).message}`,
    );
  }
}

export { sql };
