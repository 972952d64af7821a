import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { RealmRow } from '../read/realm.js';
import type { ServiceContext } from './context.js';
import { cleanUpAfterShred, destroyMessageKeys, SHRED_BATCH, systemMeta } from './forgetting.js';

const DAY = 86_400;

/** The organization's message_retention_days as a number of days; -1: unlimited (the real server's default). */
export function realmRetentionDays(realm: RealmRow): number {
  const value = (realm.properties as Record<string, unknown>).message_retention_days;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : -1;
}

/**
 * Messages past their retention period at `now`, oldest first. As on the real server: a channel's
 * own message_retention_days wins (-1: unlimited), null inherits the organization's; direct
 * messages follow the organization's. Without an organization-wide period only the channels with
 * one of their own are read, and with none at all no message is: the job runs at start and then
 * periodically, and walking the whole table to find nothing cost a scan every time.
 */
export async function expiredMessageIds(db: Db, realm: RealmRow, now: Date, limit = SHRED_BATCH, after = 0): Promise<number[]> {
  const realmDays = realmRetentionDays(realm);
  const limitedChannels = realmDays > 0 ? undefined : await channelsWithOwnRetention(db, realm.id);
  if (limitedChannels?.length === 0) return [];
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const days = sql<number>`(CASE WHEN s.message_retention_days IS NULL THEN ${realmDays}::int ELSE s.message_retention_days END)`;
  const inChannels = limitedChannels ? sql`AND m.stream_id = ANY(${limitedChannels}::int8[])` : sql``;
  const { rows } = await sql<{ id: number }>`
    SELECT m.id FROM messages m LEFT JOIN streams s ON s.id = m.stream_id
    WHERE m.realm_id = ${realm.id} ${inChannels} AND m.id > ${after} AND ${days} > 0 AND m.date_sent < ${nowSeconds}::int8 - ${DAY}::int8 * ${days}
    ORDER BY m.id LIMIT ${limit}`.execute(db);
  return rows.map((row) => Number(row.id));
}

async function channelsWithOwnRetention(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('streams').select('id').where('realm_id', '=', realmId).where('message_retention_days', '>', 0).execute();
  return rows.map((row) => Number(row.id));
}

/** Shreds every message of `realm` past its retention period; returns how many. */
export async function applyRetention(ctx: ServiceContext, realm: RealmRow, now: Date): Promise<number> {
  const meta = systemMeta(realm.id, 'internal: retention', now);
  let total = 0;
  // Held messages stay: the cursor walks past them so each pass ends.
  let after = 0;
  for (;;) {
    const ids = await expiredMessageIds(ctx.db, realm, now, SHRED_BATCH, after);
    if (ids.length === 0) {
      if (total > 0) await cleanUpAfterShred(ctx, meta, realm.id);
      return total;
    }
    after = ids[ids.length - 1]!;
    total += await destroyMessageKeys(ctx, meta, realm.id, ids, 'retention');
  }
}
