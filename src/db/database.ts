import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { mkdirSync } from 'node:fs';
import type { Database } from './schema.js';
import { PGlitePool } from './pglite-pool.js';

// int8 columns (positions, ids) stay well inside 2^53; read them as numbers on both backends.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Directory for the embedded database; undefined means in memory. */
  dataDir?: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 20 });
    // A dropped connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  let pglite: PGlite;
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    pglite = await openEmbeddedDirectory(options.dataDir);
  } else {
    pglite = await PGlite.create();
  }
  const pool = new PGlitePool(pglite);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
  return { db, kind: 'pglite', close: () => db.destroy() };
}

async function openEmbeddedDirectory(dir: string): Promise<PGlite> {
  try {
    return await PGlite.create(`${dir}/pgdata`);
  } catch (error) {
    throw new Error(
      `cannot open the embedded database in ${dir}/pgdata (is a server using it?): ${(error as Error).message}`,
    );
  }
}

export { sql };
