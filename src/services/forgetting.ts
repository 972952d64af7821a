import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { MessagesShredded, ShredReason } from '../domain/forgetting/events.js';
import { messageKeyId } from '../eventstore/crypto/personal-fields.js';
import type { RealmRow } from '../read/realm.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { heldMessageIds } from './legal-holds.js';
import { expireAttachments, orphanedAttachmentIds } from './attachments.js';
import { uploadStorage } from './upload-crypto.js';
import { pruneStoredExportKeys } from './realm-exports.js';
import { streamVersion } from './stream-version.js';
import { topicPolicyHandovers } from './topic-policy-handover.js';

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
 * Two shreds of the same messages at once (a DELETE with no grace period and the job, or two
 * replicas) append to one stream at an expected version: the loser decides again and finds them
 * already shredded, so each message is shredded by one event.
 */
export async function shredMessages(ctx: ServiceContext, meta: RequestMeta, realmId: number, ids: readonly number[], reason: ShredReason): Promise<number> {
  const shredded = await destroyMessageKeys(ctx, meta, realmId, ids, reason);
  if (shredded > 0) await cleanUpAfterShred(ctx, meta, realmId);
  return shredded;
}

/**
 * shredMessages without the clean-up after it: a job that shreds page after page (retention, due
 * deletions) cleans up once, after its last page. Cleaning up after each page of 1,000 messages
 * ran VACUUM over the whole messages table a hundred times in a shred of 100,000, and the sends
 * of that time waited on it.
 */
export async function destroyMessageKeys(ctx: ServiceContext, meta: RequestMeta, realmId: number, ids: readonly number[], reason: ShredReason): Promise<number> {
  const held = await heldMessageIds(ctx.db, realmId, ids);
  const unique = [...new Set(ids)].filter((id) => !held.has(id)).sort((a, b) => a - b);
  const streamId = `shreds-${realmId}`;
  let shredded = 0;
  for (let start = 0; start < unique.length; start += SHRED_BATCH) {
    const { result: count } = await ctx.commands.run(metadataOf(meta), async () => {
      const version = await streamVersion(ctx, streamId);
      const batch = await notYetShredded(ctx.db, unique.slice(start, start + SHRED_BATCH));
      if (batch.length === 0) return { appends: [], result: 0 };
      const keyIds = batch.map(messageKeyId);
      if (ctx.store.crypto) await ctx.store.crypto.keys.destroy(keyIds);
      else await sql`DELETE FROM data_keys WHERE key_id = ANY(${keyIds}::text[])`.execute(ctx.db);
      const event: MessagesShredded = { type: 'MessagesShredded', data: { realm_id: realmId, message_ids: batch, key_ids: keyIds, reason } };
      // Preferences sealed under these messages' keys move to their topics' other messages first.
      const handovers = await topicPolicyHandovers(ctx.db, batch, false);
      return { appends: [...handovers, { streamId, expectedVersion: version, events: [event] }], result: batch.length };
    });
    forgettingStats.shredded.set(reason, (forgettingStats.shredded.get(reason) ?? 0) + count);
    shredded += count;
  }
  return shredded;
}

/** What follows a shred: the files it orphaned, the export keys it outdated, the bytes it freed. */
export async function cleanUpAfterShred(ctx: ServiceContext, meta: RequestMeta, realmId: number): Promise<void> {
  // The files no remaining message links go now, not at the next hourly cleanup (which stays the
  // safety net: killed before this, it finds them, since the shred's fold unlinked them). A file no
  // message ever claimed is not for a shred to delete (the unused-upload retention decides that).
  await expireAttachments(ctx, uploadStorage(ctx), await orphanedAttachmentIds(ctx.db, realmId), Number.MAX_SAFE_INTEGER, meta.now);
  await pruneStoredExportKeys(ctx);
  await vacuumForgotten(ctx.db);
}

/** The ids (sorted) that still have a data key, a live row or a pending shred: what a shred has left to do. */
async function notYetShredded(db: Db, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string | number }>`
    SELECT w.id FROM unnest(${[...ids]}::int8[], ${ids.map(messageKeyId)}::text[]) AS w(id, key_id)
    WHERE EXISTS (SELECT 1 FROM data_keys k WHERE k.key_id = w.key_id)
       OR EXISTS (SELECT 1 FROM messages m WHERE m.id = w.id)
       OR EXISTS (SELECT 1 FROM pending_shreds p WHERE p.message_id = w.id)
    ORDER BY w.id`.execute(db);
  return rows.map((row) => Number(row.id));
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
  const meta = systemMeta(realm.id, 'internal: forgetting', now);
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
    if (due.length === 0) {
      if (total > 0) await cleanUpAfterShred(ctx, meta, realm.id);
      return total;
    }
    const ids = due.map((row) => Number(row.message_id));
    after = ids[ids.length - 1]!;
    total += await destroyMessageKeys(ctx, meta, realm.id, ids, 'deleted');
  }
}
