import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { temporaryUploadRoutes } from './temporary-uploads.js';
import { sendFile, storedFileSource, type FileSource } from '../file-response.js';
import { defineRoute, requestMeta } from '../route.js';
import { ApiError, errors } from '../../domain/errors.js';
import { getAttachmentByPath, listAttachments, realmUploadSpaceUsed } from '../../read/attachments.js';
import { cleanupAttachments, deleteAttachment, mayAccessAttachment, recordUpload, storeUpload, type StoredUpload } from '../../services/attachments.js';
import { storedFile, type StoredFile } from '../file-uploads.js';
import { uploadSettingsFromEnv } from '../../storage/index.js';
import { uploadStorage } from '../../services/upload-crypto.js';
import { exportFileFor } from '../../read/realm-exports.js';
import type { ServiceContext } from '../../services/context.js';
import type { UserRow } from '../../read/users.js';
import type { AppServices } from '../services.js';

const CLEANUP_INTERVAL_MS = 60 * 60 * 1000;

interface StoredAttachment extends StoredFile {
  upload: StoredUpload;
}

export interface FilePart {
  type: 'file';
  filename: string;
  mimetype: string;
  _buf?: Buffer;
  toBuffer(): Promise<Buffer>;
}

/** The file parts @fastify/multipart attached to the body (attachFieldsToBody), in field order. */
export function fileParts(request: FastifyRequest): FilePart[] {
  const body = request.body;
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return [];
  const parts: FilePart[] = [];
  for (const value of Object.values(body as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item && typeof item === 'object' && (item as { type?: unknown }).type === 'file') parts.push(item as FilePart);
    }
  }
  return parts;
}

/** POST /user_uploads, GET /attachments, DELETE /attachments/{id} (under /api/v1). */
export default async function attachmentRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = uploadStorage(ctx);
  const settings = uploadSettingsFromEnv();

  defineRoute(app, {
    method: 'POST',
    url: '/user_uploads',
    files: {
      maxMib: () => settings.maxFileSizeMib,
      // Streamed from the socket through the size check and sealing into the store, chunk by chunk.
      store: async (request, file): Promise<StoredAttachment> => {
        if (fileParts(request).some((part) => storedFile(part))) throw errors.badRequest('You may only upload one file at a time');
        const upload = await storeUpload(ctx, storage, settings, requestMeta(request), request.user!.id, file);
        return { upload, kept: false, discard: () => storage.remove(upload.pathId) };
      },
    },
    handler: async ({ request, meta }) => {
      const parts = fileParts(request);
      if (parts.length === 0) throw errors.badRequest('You must specify a file to upload');
      if (parts.length > 1) throw errors.badRequest('You may only upload one file at a time');
      const stored = storedFile<StoredAttachment>(parts[0]!);
      if (!stored) throw errors.badRequest('You must specify a file to upload');
      const result = await recordUpload(ctx, storage, meta, stored.upload);
      stored.kept = true;
      return result;
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/attachments',
    handler: async ({ user, realm }) => ({
      attachments: await listAttachments(ctx.db, user.id),
      upload_space_used: await realmUploadSpaceUsed(ctx.db, realm.id),
    }),
  });

  defineRoute<{ attachment_id: number }>(app, {
    method: 'DELETE',
    url: '/attachments/:attachment_id',
    params: { properties: { attachment_id: { type: 'integer' } }, required: ['attachment_id'] },
    handler: async ({ params, user, meta }) => {
      await deleteAttachment(ctx, storage, meta, user.id, params.attachment_id);
    },
  });

  // The scheduled cleanup of orphaned and never-used files.
  const timer = setInterval(() => void cleanupAttachments(ctx, storage, settings).catch(() => undefined), CLEANUP_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

// Served inline only when a browser cannot be tricked into running them as a page.
const INLINE_TYPES = /^(image\/(png|jpeg|gif|webp|bmp)|video\/(mp4|webm|ogg)|audio\/(mpeg|ogg|wav|webm)|application\/pdf|text\/plain)$/;

/** May the user download this file: its uploader, or anyone who can read a message linking it. */
/** GET /user_uploads/<path_id>: the authenticated download of an uploaded file (outside /api/v1). */
export async function uploadDownloadRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = uploadStorage(ctx);
  const notFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');
  app.route({
    method: 'GET',
    url: '/user_uploads/*',
    config: { auth: 'user', limited: true },
    handler: async (request, reply) => {
      const user = request.user;
      if (!user) throw errors.unauthorized();
      const raw = request.url.split('?')[0]!.replace(/^\/user_uploads\//, '');
      let pathId: string;
      try {
        pathId = raw.split('/').map(decodeURIComponent).join('/');
      } catch {
        throw notFound();
      }
      // An organization export's files live in the same storage, for its owners only.
      const exported = await exportFileFor(ctx.db, user, pathId);
      if (exported) {
        const file = await storedFileSource(storage, pathId);
        if (!file) throw notFound();
        return sendUpload(request, reply, { ...exported, path_id: pathId }, file);
      }
      const attachment = await getAttachmentByPath(ctx.db, pathId);
      if (!attachment || !(await mayAccessAttachment(ctx.db, user, attachment))) throw notFound();
      const file = await storedFileSource(storage, pathId);
      if (!file) throw notFound();
      return sendUpload(request, reply, attachment, file);
    },
  });
  await temporaryUploadRoutes(app, ctx, storage);
}

/**
 * The file's bytes with headers that keep a browser from running it as a page. A path id never
 * gets other bytes, so like the real server (patch_cache_control(private=True, immutable=True))
 * the answer may be kept by the browser, not by shared caches.
 */
export function sendUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  attachment: { content_type: string; name: string; path_id: string; create_time?: number },
  file: FileSource,
) {
  const inline = INLINE_TYPES.test(attachment.content_type);
  reply
    .header('Content-Type', inline ? attachment.content_type : 'application/octet-stream')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Disposition', `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(attachment.name)}`)
    .header('Cache-Control', 'private, immutable');
  const lastModified = attachment.create_time !== undefined ? new Date(attachment.create_time) : undefined;
  return sendFile(request, reply, file, { identity: attachment.path_id, lastModified });
}
