import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { ApiError } from '../../domain/errors.js';
import { getAttachmentByPath } from '../../read/attachments.js';
import { readTemporaryUploadToken, temporaryUploadUrl } from '../../services/temporary-upload-urls.js';
import type { ServiceContext } from '../../services/context.js';
import type { FileStorage } from '../../storage/index.js';
import type { AppServices } from '../services.js';
import { sendUpload } from './attachments.js';
import { storedFileSource } from '../file-response.js';
import { mayAccessAttachment } from '../../services/attachments.js';

const fileNotFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');

/** GET /api/v1/user_uploads/{realm_id_str}/{filename}: a temporary URL for a file the user may download. */
export default async function temporaryUploadUrlRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<{ realm_id_str: string }>(app, {
    method: 'GET',
    url: '/user_uploads/:realm_id_str/*',
    params: { properties: { realm_id_str: { type: 'string' } }, required: ['realm_id_str'] },
    handler: async ({ params, request, user, meta }) => {
      let pathId: string;
      try {
        pathId = `${params.realm_id_str}/${(request.params as Record<string, string>)['*'] ?? ''}`.split('/').map(decodeURIComponent).join('/');
      } catch {
        throw fileNotFound();
      }
      const attachment = await getAttachmentByPath(ctx.db, pathId);
      if (!attachment || !(await mayAccessAttachment(ctx.db, user, attachment))) throw fileNotFound();
      return { url: temporaryUploadUrl(user, pathId, meta.now.getTime()) };
    },
  });
}

/**
 * GET /user_uploads/temporary/{token}/{filename} (outside /api/v1, no credentials): serves the file
 * while the token lasts and its user may still download it. Errors worded as the real server's.
 */
export async function temporaryUploadRoutes(app: FastifyInstance, ctx: ServiceContext, storage: FileStorage) {
  app.route({
    method: 'GET',
    // A wildcard, not two parameters: tokens are longer than the router's parameter limit.
    url: '/user_uploads/temporary/*',
    config: { auth: 'none', limited: true },
    handler: async (request, reply) => {
      const [token = '', filename = '', ...rest] = ((request.params as Record<string, string>)['*'] ?? '').split('/');
      if (rest.length > 0) throw new ApiError('BAD_REQUEST', 400, 'Invalid filename');
      const invalidToken = () => new ApiError('BAD_REQUEST', 400, 'Invalid token');
      const found = await readTemporaryUploadToken(ctx.db, token, Date.now());
      if (!found) throw invalidToken();
      const name = found.pathId.split('/').pop()!;
      if (filename !== name && filename !== encodeURIComponent(name)) throw new ApiError('BAD_REQUEST', 400, 'Invalid filename');
      const attachment = await getAttachmentByPath(ctx.db, found.pathId);
      if (!attachment || !(await mayAccessAttachment(ctx.db, found.user, attachment))) throw invalidToken();
      const file = await storedFileSource(storage, found.pathId);
      if (!file) throw invalidToken();
      return sendUpload(request, reply, attachment, file);
    },
  });
}
