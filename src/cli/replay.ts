import { sql } from 'kysely';
import type { Config } from '../config.js';
import { openDatabase, type Db, type DatabaseHandle } from '../db/database.js';
import { acquireDataDirLock, type DataDirLock } from '../db/data-dir-lock.js';
import { createPlatform } from '../platform.js';
import type { Projection } from '../projections-api.js';
import { APPEND_LOCK_KEY } from '../eventstore/event-store.js';
import { verifyChain } from '../eventstore/verify.js';
import { jsonText } from '../eventstore/json-text.js';
import { copyDataKeys } from '../eventstore/crypto/key-transfer.js';
import { RECORDED_AT_TEXT } from '../eventstore/recorded-at.js';
import { copySignatures } from '../eventstore/signature-transfer.js';
import { adoptKekFile } from '../eventstore/crypto/kek.js';
import { kekOf } from '../eventstore/crypto/index.js';

export type ReplayPoint = { position: number } | { time: string };

/** `--until`: a log position (digits) or an ISO 8601 time. */
export function parseReplayPoint(text: string): ReplayPoint {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { position: Number(trimmed) };
  const time = Date.parse(trimmed);
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed) || Number.isNaN(time)) {
    throw new Error(`--until must be a log position or an ISO 8601 time, not "${text}"`);
  }
  return { time: new Date(time).toISOString() };
}

/** `--database`: a PostgreSQL URL, or a directory for an embedded database (laid out like DATA_DIR). */
export function targetConfig(base: Config, database: string): Config {
  const isUrl = /^postgres(ql)?:\/\//.test(database);
  return { ...base, databaseUrl: isUrl ? database : undefined, dataDir: isUrl ? base.dataDir : database, natsUrl: undefined };
}

/**
 * The last position of the state at `point`. For a time: the longest prefix of the log whose events
 * all happened at or before it (metadata.time), so the result is a state the organization really
 * was in, even if clocks of two nodes disagreed around that moment.
 */
export async function resolveReplayPoint(source: Db, point: ReplayPoint): Promise<number> {
  if ('position' in point) {
    const { rows } = await sql<{ head: number }>`SELECT coalesce(max(position), 0)::int8 AS head FROM events WHERE position <= ${point.position}`.execute(source);
    return Number(rows[0]!.head);
  }
  const { rows } = await sql<{ first_after: number | null; head: number }>`
    SELECT (SELECT min(position) FROM events WHERE (metadata->>'time')::timestamptz > ${point.time}::timestamptz)::int8 AS first_after,
           (SELECT coalesce(max(position), 0) FROM events)::int8 AS head`.execute(source);
  const firstAfter = rows[0]!.first_after;
  return firstAfter === null ? Number(rows[0]!.head) : Number(firstAfter) - 1;
}

export interface ReplayReport {
  position: number;
  events: number;
  headHash: string;
  seconds: number;
}

/**
 * Copies the log up to `point` from `source` (plain SELECTs: a running server is not disturbed)
 * into the empty database `target`, then folds it into that database's read tables.
 */
export async function replayInto(
  source: Db,
  targetConfig: Config,
  projections: readonly Projection[],
  point: ReplayPoint,
  out: (line: string) => void,
): Promise<ReplayReport> {
  const started = Date.now();
  let target = targetConfig;
  const until = await resolveReplayPoint(source, point);
  // The copied data keys stay wrapped by the source's KEK: an embedded target keeps it beside its
  // database (unless the operator gives it through DATA_KEY_SECRET); a PostgreSQL target needs that secret to be served.
  const sourceKek = kekOf(source);
  if (!target.dataKeySecret && sourceKek && !target.databaseUrl) adoptKekFile(target.dataDir, sourceKek);
  else if (!target.dataKeySecret && sourceKek) target = { ...target, dataKeySecret: sourceKek.toString('hex') };
  const platform = await createPlatform(target, { projections, startWorkers: false });
  try {
    const existing = await platform.store.head();
    if (existing.position > 0) throw new Error('replay needs an empty target database; this one already has events');
    let after = 0;
    let count = 0;
    while (after < until) {
      const rows = await source
        .selectFrom('events')
        // recorded_at as its exact text: version 2 rows hash it.
        .select(['position', 'event_id', 'stream_id', 'stream_version', 'type', 'schema_version', 'data', 'metadata', 'hash', 'hash_version', RECORDED_AT_TEXT.as('recorded_at')])
        .where('position', '>', after)
        .where('position', '<=', until)
        .orderBy('position')
        .limit(2_000)
        .execute();
      if (rows.length === 0) break;
      await platform.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
        await trx
          .insertInto('events')
          .values(rows.map((e) => ({ ...e, data: jsonText(e.data), metadata: jsonText(e.metadata) })) as never)
          .execute();
      });
      count += rows.length;
      after = Number(rows[rows.length - 1]!.position);
      out(`replay: copied ${count} events (position ${after}/${until})`);
    }
    const report = await verifyChain(platform.db);
    if (!report.ok) throw new Error(`the copied log does not verify: ${report.reason}`);
    // The keys that still exist: a value shredded since is shredded in the replayed past too.
    await copyDataKeys(source, platform.db);
    // The signed ranges that end inside the copy: the replayed log checks against the same public key.
    await copySignatures(source, platform.db, until);
    await platform.projections.rebuild((position) => out(`replay: folded up to position ${position}`));
    // Identifier sequences continue after the highest replayed ids, as after an import.
    for (const [seq, table] of [['user_id_seq', 'users'], ['stream_id_seq', 'streams'], ['user_group_id_seq', 'user_groups']] as const) {
      await sql`SELECT setval(${seq}, GREATEST((SELECT coalesce(max(id), 0) FROM ${sql.table(table)}), 1))`.execute(platform.db);
    }
    const seconds = (Date.now() - started) / 1000;
    out(`replayed ${count} events up to position ${report.headPosition} (head hash ${report.headHash}) in ${seconds.toFixed(2)} s`);
    return { position: report.headPosition, events: count, headHash: report.headHash, seconds };
  } finally {
    await platform.close();
  }
}

/**
 * Opens the configured database as the source without migrating or writing anything. The embedded
 * database is one process's at a time: the server must be stopped, as for the other commands.
 */
export async function openReplaySource(config: Config): Promise<{ db: Db; close(): Promise<void> }> {
  let lock: DataDirLock | undefined;
  if (!config.databaseUrl) lock = acquireDataDirLock(config.dataDir);
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  } catch (error) {
    lock?.release();
    throw error;
  }
  return {
    db: handle.db,
    async close() {
      await handle.close();
      lock?.release();
    },
  };
}
