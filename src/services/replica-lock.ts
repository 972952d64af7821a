import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * Runs a background pass on one replica at a time: the replica that takes the session advisory
 * lock `lockKey` (on a connection of its own, held for the pass) runs it, the others skip their
 * turn and resolve `skipped`. `sole`: this process is the database's only user (the embedded
 * database), so no lock is taken, and no connection held: PGlite has only one.
 */
export async function runOnOneReplica<T>(db: Db, sole: boolean, lockKey: number, pass: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  if (sole) return { ran: true, value: await pass() };
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${lockKey}) AS locked`.execute(conn);
    if (!rows[0]!.locked) return { ran: false as const };
    try {
      return { ran: true as const, value: await pass() };
    } finally {
      await sql`SELECT pg_advisory_unlock(${lockKey})`.execute(conn);
    }
  });
}
