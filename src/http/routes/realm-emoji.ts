import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamsSpec } from '../params.js';
import { ApiError } from '../../domain/errors.js';
import { getEmojiImage, getRealmEmoji } from '../../read/realm-emoji.js';
import { addRealmEmoji, deactivateRealmEmoji, maxEmojiFileSizeMib } from '../../services/realm-emoji.js';
import { storageFor } from '../../storage/index.js';
import { sendFile, storedFileSource } from '../file-response.js';
import { fileParts } from './attachments.js';
import type { AppServices } from '../services.js';

/** GET /realm/emoji, POST and DELETE /realm/emoji/{emoji_name} (under /api/v1). */
export default async function realmEmojiRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = storageFor(ctx);

  // The list is public to the realm's users, whatever the policy for adding emoji.
  defineRoute(app, {
    method: 'GET',
    url: '/realm/emoji',
    handler: async ({ realm }) => ({ emoji: await getRealmEmoji(ctx.db, realm.id) }),
  });

  // The real server's URL pattern takes any name, slashes included (then refused as a name, or not found);
  // names of one path segment come through :emoji_name, longer ones through the wildcard.
  const nameOf = (request: { params: unknown }, params: { emoji_name?: string }) =>
    params.emoji_name ?? (request.params as Record<string, string>)['*'] ?? '';
  for (const url of ['/realm/emoji/:emoji_name', '/realm/emoji/*']) {
    const params: ParamsSpec = url.endsWith('*') ? { properties: {} } : { properties: { emoji_name: { type: 'string' } }, required: ['emoji_name'] };
    defineRoute<{ emoji_name?: string }>(app, {
      method: 'POST',
      url,
      params,
      files: { maxMib: () => maxEmojiFileSizeMib() },
      handler: async ({ params, request, user, realm, meta }) => {
        const files = await Promise.all(fileParts(request).map(async (part) => ({
          mimetype: part.mimetype ?? '',
          data: part._buf ?? (await part.toBuffer()),
        })));
        await addRealmEmoji(ctx, storage, meta, user, realm, nameOf(request, params), files);
      },
    });

    defineRoute<{ emoji_name?: string }>(app, {
      method: 'DELETE',
      url,
      params,
      handler: async ({ params, request, user, realm, meta }) => {
        await deactivateRealmEmoji(ctx, meta, user, realm, nameOf(request, params));
      },
    });
  }
}

/**
 * GET /user_avatars/<realm_id>/emoji/images/<file_name> and .../images/still/<file_name>: the emoji
 * images (outside /api/v1): the resized image, the original upload (`<file_name>.original`) and the
 * still first frame of an animated one. Public like the real server's, so that rendered messages and
 * notifications can show them.
 */
export async function emojiImageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = storageFor(ctx);
  const notFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');
  for (const still of [false, true]) {
    app.route<{ Params: { realm_id: string; file_name: string } }>({
      method: 'GET',
      url: still ? '/user_avatars/:realm_id/emoji/images/still/:file_name' : '/user_avatars/:realm_id/emoji/images/:file_name',
      config: { auth: 'none', limited: true },
      handler: async (request, reply) => {
        const realmId = Number(request.params.realm_id);
        if (!Number.isSafeInteger(realmId)) throw notFound();
        const image = await getEmojiImage(ctx.db, realmId, request.params.file_name, still);
        const file = image ? await storedFileSource(storage, image.path_id) : null;
        if (!image || !file) throw notFound();
        reply
          .header('Content-Type', image.content_type)
          .header('X-Content-Type-Options', 'nosniff')
          .header('Cache-Control', 'public, max-age=86400');
        return sendFile(request, reply, file, { identity: image.path_id });
      },
    });
  }
}
