import { randomBytes, randomUUID } from 'node:crypto';
import { decideAttachment, type AttachmentCommand } from '../domain/attachments/decider.js';
import type { AttachmentDeleted } from '../domain/attachments/events.js';
import { getAttachmentState, realmUploadSpaceUsed, unlinkedAttachmentIds } from '../read/attachments.js';
import type { FileStorage, UploadSettings } from '../storage/index.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const attachmentStream = (attachmentId: number) => `attachment-${attachmentId}`;

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

/** Stores the bytes, then records the upload; the bytes are removed again if recording fails. */
export async function uploadFile(
  ctx: ServiceContext,
  storage: FileStorage,
  settings: UploadSettings,
  meta: RequestMeta,
  ownerId: number,
  file: UploadedFile,
): Promise<{ uri: string; url: string; filename: string }> {
  const attachment_id = await ctx.commands.nextId('attachment_id_seq');
  const random_dir = `${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}`;
  const base: Omit<Extract<AttachmentCommand, { type: 'UploadAttachment' }>, 'realm_space_used'> = {
    type: 'UploadAttachment',
    attachment_id,
    realm_id: meta.realmId,
    owner_id: ownerId,
    file_name: file.filename,
    random_dir,
    content_type: file.mimetype || 'application/octet-stream',
    size: file.data.length,
    max_size_mib: settings.maxFileSizeMib,
    now_ms: meta.now.getTime(),
  };
  // Validate (size, name) before writing anything.
  const [planned] = decideAttachment({ ...base, realm_space_used: 0 }, null);
  if (!planned || planned.type !== 'AttachmentUploaded') throw new Error('upload produced no event');
  const pathId = planned.data.path_id;
  await storage.save(pathId, file.data, base.content_type);
  try {
    await ctx.commands.run(metadataOf(meta), async () => {
      const used = await realmUploadSpaceUsed(ctx.db, meta.realmId);
      const events = decideAttachment({ ...base, realm_space_used: used }, null);
      return { appends: [{ streamId: attachmentStream(attachment_id), expectedVersion: -1, events }], result: undefined };
    });
  } catch (error) {
    await storage.remove(pathId).catch(() => undefined);
    throw error;
  }
  const url = `/user_uploads/${pathId.split('/').map(encodeURIComponent).join('/')}`;
  return { uri: url, url, filename: planned.data.name };
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
  let deleted = 0;
  for (const attachmentId of await unlinkedAttachmentIds(ctx.db)) {
    const state = await getAttachmentState(ctx.db, attachmentId);
    if (!state) continue;
    const meta: RequestMeta = { actorId: null, realmId: state.realm_id, client: 'attachment-cleanup', requestId: randomUUID(), now };
    try {
      const done = await runDeletion(ctx, storage, meta, attachmentId, (used) => ({
        type: 'ExpireAttachment', now_ms: now.getTime(), unused_retention_ms: settings.unusedRetentionMs, realm_space_used: used,
      }));
      if (done) deleted += 1;
    } catch {
      // another node deleted it first; the next run looks again
    }
  }
  return deleted;
}
