import { randomBytes, randomUUID } from 'node:crypto';
import { decideAttachment, type AttachmentCommand } from '../domain/attachments/decider.js';
import type { AttachmentDeleted } from '../domain/attachments/events.js';
import type { Db } from '../db/database.js';
import { getAttachmentState, linkedMessageIds, pathIdOfUploadPath, realmUploadSpaceUsed, unlinkedAttachmentIds } from '../read/attachments.js';
import { getMessageRows, userMessageState } from '../read/messages.js';
import type { UserRow } from '../read/users.js';
import { canReadMessage, isSubscribed } from '../visibility.js';
import type { FileStorage, UploadSettings } from '../storage/index.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const attachmentStream = (attachmentId: number) => `attachment-${attachmentId}`;

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

/** Whether `user` may download the upload: its owner, or anyone who may read a message linking it. */
export async function mayAccessAttachment(db: Db, user: UserRow, attachment: { id: number; owner_id: number; realm_id: number }): Promise<boolean> {
  if (attachment.realm_id !== user.realm_id) return false;
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
    const attachment = await db.selectFrom('attachments').select(['id', 'owner_id', 'realm_id']).where('path_id', '=', pathId).executeTakeFirst();
    if (attachment && (await mayAccessAttachment(db, sender, attachment))) claimable.push(path);
  }
  return claimable;
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
