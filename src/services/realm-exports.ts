import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errors } from '../domain/errors.js';
import type { RealmExportDeleted, RealmExportFailed, RealmExportFinished, RealmExportRequested } from '../domain/realm-exports/events.js';
import { writeExport } from '../eventstore/log-export.js';
import { keyFileOf, writeKeyFile, type WrappedKeyRow } from '../eventstore/crypto/key-transfer.js';
import { uploadStorage } from './upload-crypto.js';
import { signatureFileOf, writeSignatureFile } from '../eventstore/signature-transfer.js';
import { EXPORT_FILE_SUFFIXES, getRealmExport, pendingRealmExportIds, realmExportsSince } from '../read/realm-exports.js';
import type { FileStorage } from '../storage/index.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

/** The real server's limit: at most 5 exports requested per organization in 7 days. */
export const EXPORT_LIMIT = 5;
const EXPORT_LIMIT_WINDOW_S = 7 * 24 * 3600;

const exportStream = (exportId: number) => `realm-export-${exportId}`;
const seconds = (date: Date) => date.getTime() / 1000;

/**
 * Where one attempt writes its files. Random per attempt: when two processes run the same export,
 * the one whose RealmExportFinished loses the append removes only its own files.
 */
function exportPathId(realmId: number, exportId: number): string {
  const digest = createHash('sha256').update(`realm-export:${realmId}:${exportId}:${randomUUID()}`).digest();
  return `${realmId}/${digest.subarray(0, 1).toString('hex')}/${digest.subarray(1, 19).toString('base64url')}/zulip-export-${exportId}.jsonl`;
}

/**
 * New requests go on one stream per organization, so the limit check and the request are one
 * decision: two concurrent requests expect the same version, and the loser decides again on a
 * count that includes the winner. (Requests from before this were on the export's own stream.)
 */
const requestsStream = (realmId: number) => `realm-export-requests-${realmId}`;

/** Stores one written file as a stream (stores that take streams never hold it whole); answers its size in bytes. */
async function saveFile(storage: FileStorage, pathId: string, file: string): Promise<number> {
  const { size } = await stat(file);
  await storage.save(pathId, createReadStream(file), 'application/octet-stream');
  return size;
}

/** POST /export/realm: records the request; the export itself runs in the background (runRealmExport). */
export async function requestRealmExport(ctx: ServiceContext, meta: RequestMeta, actingUserId: number): Promise<number> {
  const now = seconds(meta.now);
  const exportId = await ctx.commands.nextId('realm_export_id_seq');
  const requested: RealmExportRequested = {
    type: 'RealmExportRequested',
    data: { export_id: exportId, realm_id: meta.realmId, acting_user_id: actingUserId, export_time: now },
  };
  await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, requestsStream(meta.realmId));
    if ((await realmExportsSince(ctx.db, meta.realmId, now - EXPORT_LIMIT_WINDOW_S)) >= EXPORT_LIMIT) {
      throw errors.badRequest('Exceeded rate limit.');
    }
    return { appends: [{ streamId: requestsStream(meta.realmId), expectedVersion: version === 0 ? -1 : version, events: [requested] }], result: undefined };
  });
  return exportId;
}

export type ExportOutcome = 'finished' | 'failed' | 'not-pending';

/**
 * Writes the log, its data keys and its signed ranges (what `cli export` writes) to the upload
 * storage and records the outcome. Safe to run twice, in one process or two: the outcome is
 * appended only while the export's stream holds just its request, so one attempt wins and the
 * other removes its files.
 */
export async function runRealmExport(ctx: ServiceContext, storage: FileStorage, realmId: number, exportId: number, now: () => Date = () => new Date()): Promise<ExportOutcome> {
  const row = await getRealmExport(ctx.db, realmId, exportId);
  if (!row || row.path_id !== null || row.failed_timestamp !== null) return 'not-pending';
  const meta = (): RequestMeta => ({ actorId: row.acting_user_id, realmId, client: 'realm-export', requestId: randomUUID(), now: now() });
  const dir = await mkdtemp(path.join(tmpdir(), 'realm-export-'));
  const pathId = exportPathId(realmId, exportId);
  let written = false;
  let outcome: RealmExportFinished | RealmExportFailed;
  try {
    const file = path.join(dir, 'log.jsonl');
    const sink = createWriteStream(file);
    const eventCount = await writeExport(ctx.db, sink);
    await new Promise<void>((resolve, reject) => sink.end((error?: Error | null) => (error ? reject(error) : resolve())));
    await writeKeyFile(ctx.db, keyFileOf(file));
    await writeSignatureFile(ctx.db, signatureFileOf(file));
    const files = [file, keyFileOf(file), signatureFileOf(file)];
    let size = 0;
    written = true;
    for (const [i, suffix] of EXPORT_FILE_SUFFIXES.entries()) {
      const saved = await saveFile(storage, `${pathId}${suffix}`, files[i]!);
      if (i === 0) size = saved;
    }
    outcome = { type: 'RealmExportFinished', data: { export_id: exportId, realm_id: realmId, path_id: pathId, size, event_count: eventCount } };
  } catch (error) {
    outcome = { type: 'RealmExportFailed', data: { export_id: exportId, realm_id: realmId, failed_timestamp: seconds(now()), reason: error instanceof Error ? error.message : String(error) } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { result: appended } = await ctx.commands.run(metadataOf(meta()), async () => {
    // The export's stream holds nothing yet, or only its request (when it was requested there).
    const version = await streamVersion(ctx, exportStream(exportId));
    if (version > 1 || (version === 1 && !(await requestedOnOwnStream(ctx, exportId)))) return { appends: [], result: false };
    return { appends: [{ streamId: exportStream(exportId), expectedVersion: version === 0 ? -1 : version, events: [outcome] }], result: true };
  });
  if (!appended) {
    if (written) await removeExportFiles(storage, pathId);
    return 'not-pending';
  }
  return outcome.type === 'RealmExportFinished' ? 'finished' : 'failed';
}

async function requestedOnOwnStream(ctx: ServiceContext, exportId: number): Promise<boolean> {
  const first = await ctx.db.selectFrom('events').select('type').where('stream_id', '=', exportStream(exportId)).where('stream_version', '=', 1).executeTakeFirst();
  return first?.type === 'RealmExportRequested';
}

async function removeExportFiles(storage: FileStorage, pathId: string): Promise<void> {
  for (const suffix of EXPORT_FILE_SUFFIXES) await storage.remove(`${pathId}${suffix}`).catch(() => undefined);
}

/**
 * Exports still pending when a process starts were cut off by a restart (or are running in
 * another process): they run again here; the first outcome appended wins.
 */
export async function resumePendingExports(ctx: ServiceContext, storage: FileStorage, onError: (error: unknown, exportId: number) => void): Promise<void> {
  for (const exportId of await pendingRealmExportIds(ctx.db)) {
    const row = await ctx.db.selectFrom('realm_exports').select('realm_id').where('id', '=', exportId).executeTakeFirst();
    if (!row) continue;
    await runRealmExport(ctx, storage, row.realm_id, exportId).catch((error: unknown) => onError(error, exportId));
  }
}

/** DELETE /export/realm/{export_id}, with the real server's errors; the files go once the deletion committed. */
export async function deleteRealmExport(ctx: ServiceContext, storage: FileStorage, meta: RequestMeta, exportId: number): Promise<void> {
  const { result: pathId } = await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, exportStream(exportId));
    const row = await getRealmExport(ctx.db, meta.realmId, exportId);
    if (!row) throw errors.badRequest('Invalid data export ID');
    if (row.deleted_timestamp !== null) throw errors.badRequest('Export already deleted');
    if (row.failed_timestamp !== null) throw errors.badRequest('Export failed, nothing to delete');
    if (row.path_id === null) throw errors.badRequest('Export still in progress');
    const deleted: RealmExportDeleted = { type: 'RealmExportDeleted', data: { export_id: exportId, realm_id: meta.realmId, deleted_timestamp: seconds(meta.now) } };
    return { appends: [{ streamId: exportStream(exportId), expectedVersion: version, events: [deleted] }], result: row.path_id };
  });
  await removeExportFiles(storage, pathId);
}

/**
 * A stored export's key file holds the keys that existed when it was taken: once a key is destroyed
 * (a shred, an erasure), its copy there must go too, or the operator (who has the KEK) could open
 * from the server's own storage what was forgotten since. Rewrites each stored export's key file to
 * the keys that still exist. Idempotent; called after every destruction and by each forgetting
 * pass (the safety net for a crash in between). Returns how many key copies were removed.
 */
export async function pruneStoredExportKeys(ctx: Pick<ServiceContext, 'db' | 'config' | 'store'>): Promise<number> {
  const stored = await ctx.db.selectFrom('realm_exports').select('path_id')
    .where('path_id', 'is not', null).where('deleted_timestamp', 'is', null).execute();
  if (stored.length === 0) return 0;
  const storage = uploadStorage(ctx);
  let removed = 0;
  for (const { path_id: pathId } of stored) {
    const file = `${pathId!}${EXPORT_FILE_SUFFIXES[1]}`;
    const bytes = await storage.read(file);
    if (!bytes) continue;
    const lines = bytes.toString('utf8').split('\n').filter((line) => line.trim() !== '');
    const ids = lines.map((line) => (JSON.parse(line) as WrappedKeyRow).key_id);
    const alive = new Set<string>();
    for (let start = 0; start < ids.length; start += 5_000) {
      const rows = await ctx.db.selectFrom('data_keys').select('key_id').where('key_id', 'in', ids.slice(start, start + 5_000)).execute();
      for (const row of rows) alive.add(row.key_id);
    }
    const kept = lines.filter((_, i) => alive.has(ids[i]!));
    if (kept.length === lines.length) continue;
    await storage.save(file, Buffer.from(kept.map((line) => `${line}\n`).join(''), 'utf8'), 'application/octet-stream');
    removed += lines.length - kept.length;
  }
  return removed;
}
