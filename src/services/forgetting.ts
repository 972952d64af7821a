import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { MessagesShredded, ShredReason } from '../domain/forgetting/events.js';
import { messageKeyId } from '../eventstore/crypto/personal-fields.js';
import type { RealmRow } from '../read/realm.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { heldMessageIds } from './legal-holds.js';

/** Messages per MessagesShredded event (and per key-destroying statement). */
export const SHRED_BATCH = 1_000;
const DAY = 86_400;

/** Days a deleted message stays readable in the log before its key is destroyed (0: at once). */
export function deletedMessageGraceDays(realm: RealmRow, fallback: number): number {
  const value = (realm.properties as Record<string, unknown>).deleted_message_shred_days;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** Shredding work done by this process, for /metrics. */
export const forgettingStats = {
  shredded: new Map<ShredReason, number>(),
  retentionRuns: 0,
  lastRetentionRunSeconds: 0,
  lastRetentionDurationSeconds: 0,
};

/**
 * Destroys the data keys of `ids` not under legal hold (held ones are left for a later pass, once
 * the hold is lifted), then records that as a MessagesShredded event (whose fold
 * removes any live rows). Keys go first: killed in between, the keys are gone and the job finds
 * the same messages again (their pending or live rows are still there), so it is safe to repeat.
 */
export async function shredMessages(ctx: ServiceContext, meta: RequestMeta, realmId: number, ids: readonly number[], reason: ShredReason): Promise<number> {
  const held = await heldMessageIds(ctx.db, realmId, ids);
  const unique = [...new Set(ids)].filter((id) => !held.has(id)).sort((a, b) => a - b);
  for (let start = 0; start < unique.length; start += SHRED_BATCH) {
    const batch = unique.slice(start, start + SHRED_BATCH);
    const keyIds = batch.map(messageKeyId);
    if (ctx.store.crypto) await ctx.store.crypto.keys.destroy(keyIds);
    else await sql`DELETE FROM data_keys WHERE key_id = ANY(${keyIds}::text[])`.execute(ctx.db);
    const event: MessagesShredded = { type: 'MessagesShredded', data: { realm_id: realmId, message_ids: batch, key_ids: keyIds, reason } };
    await ctx.commands.run(metadataOf(meta), async () => ({
      appends: [{ streamId: `shreds-${realmId}`, expectedVersion: undefined, events: [event] }],
      result: undefined,
    }));
    forgettingStats.shredded.set(reason, (forgettingStats.shredded.get(reason) ?? 0) + batch.length);
  }
  if (unique.length > 0) await vacuumForgotten(ctx.db);
  return unique.length;
}

/**
 * Deleted rows keep their bytes in the table files until VACUUM reclaims them: run it on the
 * tables that held the forgotten values. Best effort (it cannot run inside a transaction, and a
 * concurrent VACUUM may hold the table); the next shred tries again.
 */
export async function vacuumForgotten(db: Db, more: readonly string[] = []): Promise<void> {
  for (const table of ['data_keys', 'messages', 'pending_shreds', ...more]) {
    await sql`VACUUM ${sql.table(table)}`.execute(db).catch(() => undefined);
  }
}

/** Metadata of work the server does on its own (no request, no acting user). */
export function systemMeta(realmId: number, client: string, now = new Date()): RequestMeta {
  return { actorId: null, realmId, client, requestId: randomUUID(), now };
}

/** Deleted messages whose grace period has passed at `now` are shredded; returns how many. */
export async function shredDueDeletions(ctx: ServiceContext, realm: RealmRow, now: Date, fallbackGraceDays: number): Promise<number> {
  const cutoff = Math.floor(now.getTime() / 1000) - deletedMessageGraceDays(realm, fallbackGraceDays) * DAY;
  let total = 0;
  // Held messages stay pending: the cursor walks past them so each pass ends.
  let after = 0;
  for (;;) {
    const due = await ctx.db
      .selectFrom('pending_shreds')
      .select('message_id')
      .where('realm_id', '=', realm.id)
      .where('deleted_at', '<=', cutoff)
      .where('message_id', '>', after)
      .orderBy('message_id')
      .limit(SHRED_BATCH)
      .execute();
    if (due.length === 0) return total;
    const ids = due.map((row) => Number(row.message_id));
    after = ids[ids.length - 1]!;
    total += await shredMessages(ctx, systemMeta(realm.id, 'internal: forgetting', now), realm.id, ids, 'deleted');
  }
}
