import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errors } from '../domain/errors.js';
import type { RealmExportDeleted, RealmExportFailed, RealmExportFinished, RealmExportRequested } from '../domain/realm-exports/events.js';
import { writeExport } from '../eventstore/log-export.js';
import { keyFileOf, writeKeyFile } from '../eventstore/crypto/key-transfer.js';
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

/** POST /export/realm: records the request; the export itself runs in the background (runRealmExport). */
export async function requestRealmExport(ctx: ServiceContext, meta: RequestMeta, actingUserId: number): Promise<number> {
  const now = seconds(meta.now);
  if ((await realmExportsSince(ctx.db, meta.realmId, now - EXPORT_LIMIT_WINDOW_S)) >= EXPORT_LIMIT) {
    throw errors.badRequest('Exceeded rate limit.');
  }
  const exportId = await ctx.commands.nextId('realm_export_id_seq');
  const requested: RealmExportRequested = {
    type: 'RealmExportRequested',
    data: { export_id: exportId, realm_id: meta.realmId, acting_user_id: actingUserId, export_time: now },
  };
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: exportStream(exportId), expectedVersion: 0, events: [requested] }],
    result: undefined,
  }));
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
      const data = await readFile(files[i]!);
      if (i === 0) size = data.length;
      await storage.save(`${pathId}${suffix}`, data, 'application/octet-stream');
    }
    outcome = { type: 'RealmExportFinished', data: { export_id: exportId, realm_id: realmId, path_id: pathId, size, event_count: eventCount } };
  } catch (error) {
    outcome = { type: 'RealmExportFailed', data: { export_id: exportId, realm_id: realmId, failed_timestamp: seconds(now()), reason: error instanceof Error ? error.message : String(error) } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { result: appended } = await ctx.commands.run(metadataOf(meta()), async () => {
    if ((await streamVersion(ctx, exportStream(exportId))) !== 1) return { appends: [], result: false };
    return { appends: [{ streamId: exportStream(exportId), expectedVersion: 1, events: [outcome] }], result: true };
  });
  if (!appended) {
    if (written) await removeExportFiles(storage, pathId);
    return 'not-pending';
  }
  return outcome.type === 'RealmExportFinished' ? 'finished' : 'failed';
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
