import { randomBytes, randomUUID } from 'node:crypto';
import { decideAttachment, type AttachmentCommand } from '../domain/attachments/decider.js';
import type { AttachmentDeleted } from '../domain/attachments/events.js';
import type { Db } from '../db/database.js';
import { getAttachmentState, linkedMessageIds, pathIdOfUploadPath, realmUploadSpaceUsed, unlinkedAttachmentIds } from '../read/attachments.js';
import { getMessageRows, userMessageState } from '../read/messages.js';
import type { UserRow } from '../read/users.js';
import { canReadMessage, isSubscribed } from '../visibility.js';
import type { FileBytes, FileStorage, UploadSettings } from '../storage/index.js';
import { ABANDONED_SAVE_AGE_MS } from '../storage/file-storage.js';
import { ApiError } from '../domain/errors.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';
import { pruneStoredExportKeys } from './realm-exports.js';

export const attachmentStream = (attachmentId: number) => `attachment-${attachmentId}`;

export interface UploadedFile {
  filename: string;
  mimetype: string;
  /** The bytes as they arrive (from the request's socket): never gathered whole. */
  data: FileBytes;
}

/** Bytes written to the store for an upload not yet recorded in the log. */
export interface StoredUpload {
  pathId: string;
  command: Extract<AttachmentCommand, { type: 'UploadAttachment' }>;
}

/** The bytes of `data`, refusing (with the real server's message) the byte that passes `maxMib`. */
export async function* withinLimit(data: FileBytes, maxMib: number, counted: { size: number }): AsyncGenerator<Uint8Array> {
  const limit = maxMib * 1024 * 1024;
  for await (const piece of Buffer.isBuffer(data) ? [data] : data) {
    counted.size += piece.byteLength;
    if (counted.size > limit) throw fileTooLarge(maxMib);
    yield piece;
  }
}

export const fileTooLarge = (maxMib: number, status = 400) =>
  new ApiError('BAD_REQUEST', status, `Uploaded file is larger than the allowed limit of ${maxMib} MiB`);

/** Whether `user` may download the upload: its owner, or anyone who may read a message linking it. */
export async function mayAccessAttachment(db: Db, user: UserRow, attachment: { id: number; owner_id: number; realm_id: number; orphaned: boolean }): Promise<boolean> {
  // A file gone with its deleted messages is gone for everyone, its uploader too (as on the real
  // server, which archives it with them), until the cleanup removes its bytes.
  if (attachment.realm_id !== user.realm_id || attachment.orphaned) return false;
  if (attachment.owner_id === user.id) return true;
  const rows = await getMessageRows(db, await linkedMessageIds(db, attachment.id));
  if (rows.length === 0) return false;
  const { received } = await userMessageState(db, user.id, rows);
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  for (const row of rows) {
    const stream = row.stream_id === null ? undefined : await db.selectFrom('streams').selectAll().where('id', '=', row.stream_id).executeTakeFirst();
    const subscribed = row.stream_id === null ? false : await isSubscribed(db, user.id, row.stream_id);
    const access = { stream, subscribed, received: received.has(row.id), dmParticipant: received.has(row.id) };
    if (canReadMessage(viewer, row, access)) return true;
  }
  return false;
}

/**
 * The uploads a message by `sender` may claim: only those the sender may access themselves. As on
 * the real server, a link to anyone else's upload stays in the content but grants its readers
 * nothing (otherwise linking a private file's URL would hand it to the message's audience).
 */
export async function claimableUploadPaths(db: Db, sender: UserRow, paths: readonly string[]): Promise<string[]> {
  const claimable: string[] = [];
  for (const path of paths) {
    const pathId = pathIdOfUploadPath(path);
    if (pathId === null) continue;
    const attachment = await db.selectFrom('attachments').select(['id', 'owner_id', 'realm_id', 'orphaned']).where('path_id', '=', pathId).executeTakeFirst();
    if (attachment && (await mayAccessAttachment(db, sender, attachment))) claimable.push(path);
  }
  return claimable;
}

/**
 * Streams the bytes into the store (the name checked first, the size as they arrive), without
 * recording anything: recordUpload does that once the request is known to be good. On failure
 * (too large, the client went away, the store failed) nothing is left in the store.
 */
export async function storeUpload(
  ctx: ServiceContext,
  storage: FileStorage,
  settings: UploadSettings,
  meta: RequestMeta,
  ownerId: number,
  file: UploadedFile,
): Promise<StoredUpload> {
  const attachment_id = await ctx.commands.nextId('attachment_id_seq');
  const random_dir = `${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}`;
  const command: StoredUpload['command'] = {
    type: 'UploadAttachment',
    attachment_id,
    realm_id: meta.realmId,
    owner_id: ownerId,
    file_name: file.filename,
    random_dir,
    content_type: file.mimetype || 'application/octet-stream',
    size: 0,
    max_size_mib: settings.maxFileSizeMib,
    now_ms: meta.now.getTime(),
    realm_space_used: 0,
  };
  // Validate the name before writing anything; the size is checked as the bytes arrive.
  const [planned] = decideAttachment(command, null);
  if (!planned || planned.type !== 'AttachmentUploaded') throw new Error('upload produced no event');
  const pathId = planned.data.path_id;
  const counted = { size: 0 };
  try {
    await storage.save(pathId, withinLimit(file.data, settings.maxFileSizeMib, counted), command.content_type);
  } catch (error) {
    // The store left no partial file; this also destroys a sealed file's new key.
    await storage.remove(pathId).catch(() => undefined);
    throw error;
  }
  return { pathId, command: { ...command, size: counted.size } };
}

/** Records a stored upload (AttachmentUploaded); the bytes are removed again if recording fails. */
export async function recordUpload(
  ctx: ServiceContext,
  storage: FileStorage,
  meta: RequestMeta,
  stored: StoredUpload,
): Promise<{ uri: string; url: string; filename: string }> {
  let name = '';
  try {
    await ctx.commands.run(metadataOf(meta), async () => {
      const used = await realmUploadSpaceUsed(ctx.db, meta.realmId);
      const events = decideAttachment({ ...stored.command, realm_space_used: used }, null);
      name = events[0]?.type === 'AttachmentUploaded' ? events[0].data.name : '';
      return { appends: [{ streamId: attachmentStream(stored.command.attachment_id), expectedVersion: -1, events }], result: undefined };
    });
  } catch (error) {
    await storage.remove(stored.pathId).catch(() => undefined);
    throw error;
  }
  const url = `/user_uploads/${stored.pathId.split('/').map(encodeURIComponent).join('/')}`;
  return { uri: url, url, filename: name };
}

/** Stores the bytes, then records the upload. */
export async function uploadFile(
  ctx: ServiceContext,
  storage: FileStorage,
  settings: UploadSettings,
  meta: RequestMeta,
  ownerId: number,
  file: UploadedFile,
): Promise<{ uri: string; url: string; filename: string }> {
  return recordUpload(ctx, storage, meta, await storeUpload(ctx, storage, settings, meta, ownerId, file));
}

/** Records the deletion, then removes the bytes (after the event committed). */
async function runDeletion(
  ctx: ServiceContext,
  storage: FileStorage,
  meta: RequestMeta,
  attachmentId: number,
  build: (spaceUsed: number) => AttachmentCommand,
): Promise<boolean> {
  const { events } = await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = attachmentStream(attachmentId);
    const version = await streamVersion(ctx, streamId);
    const state = await getAttachmentState(ctx.db, attachmentId);
    const used = state ? await realmUploadSpaceUsed(ctx.db, state.realm_id) : 0;
    const decided = decideAttachment(build(used), state && state.realm_id === meta.realmId ? state : null);
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events: decided }], result: undefined };
  });
  const deleted = events.find((e) => e.type === 'AttachmentDeleted');
  if (!deleted) return false;
  await storage.remove((deleted.data as AttachmentDeleted['data']).path_id);
  return true;
}

export async function deleteAttachment(ctx: ServiceContext, storage: FileStorage, meta: RequestMeta, userId: number, attachmentId: number): Promise<void> {
  await runDeletion(ctx, storage, meta, attachmentId, (used) => ({ type: 'DeleteAttachment', actor_id: userId, realm_space_used: used }));
  await pruneStoredExportKeys(ctx);
}

/**
 * The scheduled cleanup, driven by the read tables: deletes files whose last linking message was
 * deleted, and files never used in a message once the retention period is over. Safe to run on
 * several nodes at once (a deletion is one event on the attachment's stream; a second attempt
 * decides nothing or loses the version race). Returns how many files it deleted.
 */
export async function cleanupAttachments(
  ctx: ServiceContext,
  storage: FileStorage,
  settings: UploadSettings,
  now: Date = new Date(),
): Promise<number> {
  const deleted = await expireAttachments(ctx, storage, await unlinkedAttachmentIds(ctx.db), settings.unusedRetentionMs, now);
  if (deleted > 0) await pruneStoredExportKeys(ctx);
  await storage.sweepAbandonedSaves?.(new Date(now.getTime() - ABANDONED_SAVE_AGE_MS));
  return deleted;
}

/**
 * Deletes those of `attachmentIds` that no message links any more (or unused past retention):
 * the shredding of a message calls it for the files its messages linked, so their bytes and keys go
 * with it rather than at the next cleanup. Idempotent: a file already deleted decides nothing.
 */
export async function expireAttachments(
  ctx: ServiceContext,
  storage: FileStorage,
  attachmentIds: readonly number[],
  unusedRetentionMs: number,
  now: Date = new Date(),
): Promise<number> {
  let deleted = 0;
  for (const attachmentId of attachmentIds) {
    const state = await getAttachmentState(ctx.db, attachmentId);
    if (!state) continue;
    const meta: RequestMeta = { actorId: null, realmId: state.realm_id, client: 'attachment-cleanup', requestId: randomUUID(), now };
    try {
      const done = await runDeletion(ctx, storage, meta, attachmentId, (used) => ({
        type: 'ExpireAttachment', now_ms: now.getTime(), unused_retention_ms: unusedRetentionMs, realm_space_used: used,
      }));
      if (done) deleted += 1;
    } catch {
      // another node deleted it first; the next run looks again
    }
  }
  return deleted;
}

/**
 * Files of the realm that messages once linked and none links now: a deleted message unlinks its
 * files at once (before its grace period ends), a shredded one in its fold.
 */
export async function orphanedAttachmentIds(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('attachments as a').select('a.id')
    .where('a.realm_id', '=', realmId).where('a.orphaned', '=', true)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('attachment_messages as l').select('l.message_id').whereRef('l.attachment_id', '=', 'a.id'))))
    .orderBy('a.id').execute();
  return rows.map((row) => row.id);
}
