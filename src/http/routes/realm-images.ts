import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { ApiError, errors } from '../../domain/errors.js';
import { isAdminRole } from '../../domain/roles.js';
import { getRealm } from '../../read/realm.js';
import { MAX_REALM_IMAGE_FILE_SIZE_MIB, realmImagePathId, realmImageUrl, removeRealmImage, uploadRealmImage, UPLOADED, type RealmImage } from '../../services/realm-images.js';
import { storageFor } from '../../storage/index.js';
import { sendFile, storedFileSource } from '../file-response.js';
import { fileParts } from './attachments.js';
import type { AppServices } from '../services.js';

/** The request's own query string, passed on to the image as the real server does. */
function withQuery(url: string, rawUrl: string): string {
  const at = rawUrl.indexOf('?');
  if (at === -1 || at === rawUrl.length - 1) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${rawUrl.slice(at + 1)}`;
}

/** POST/DELETE/GET /realm/icon and /realm/logo (the night logo with `night`), under /api/v1. */
export default async function realmImageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = storageFor(ctx);
  const logoImage = (night: boolean): RealmImage => (night ? 'night_logo' : 'logo');

  defineRoute(app, {
    method: 'POST',
    url: '/realm/icon',
    files: { maxMib: () => MAX_REALM_IMAGE_FILE_SIZE_MIB },
    handler: async ({ request, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      const parts = fileParts(request);
      if (parts.length !== 1) throw errors.badRequest('You must upload exactly one icon.');
      const part = parts[0]!;
      await uploadRealmImage(ctx, storage, meta, 'icon', part._buf ?? (await part.toBuffer()));
      const realm = (await getRealm(ctx.db, meta.realmId))!;
      return { icon_url: realmImageUrl(realm, 'icon') };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/realm/icon',
    handler: async ({ user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      await removeRealmImage(ctx, meta, 'icon');
      const realm = (await getRealm(ctx.db, meta.realmId))!;
      return { icon_url: realmImageUrl(realm, 'icon') };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/icon',
    handler: async ({ realm, request, reply }) => {
      reply.code(302).header('Location', withQuery(realmImageUrl(realm, 'icon'), request.url)).send();
    },
  });

  const night = { night: { type: 'boolean' as const } };

  defineRoute<{ night: boolean }>(app, {
    method: 'POST',
    url: '/realm/logo',
    params: { properties: night, required: ['night'] },
    files: { maxMib: () => MAX_REALM_IMAGE_FILE_SIZE_MIB },
    handler: async ({ params, request, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      const parts = fileParts(request);
      if (parts.length !== 1) throw errors.badRequest('You must upload exactly one logo.');
      const part = parts[0]!;
      await uploadRealmImage(ctx, storage, meta, logoImage(params.night), part._buf ?? (await part.toBuffer()));
    },
  });

  defineRoute<{ night: boolean }>(app, {
    method: 'DELETE',
    url: '/realm/logo',
    params: { properties: night, required: ['night'] },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      await removeRealmImage(ctx, meta, logoImage(params.night));
    },
  });

  defineRoute<{ night: boolean }>(app, {
    method: 'GET',
    url: '/realm/logo',
    params: { properties: night, required: ['night'] },
    handler: async ({ params, realm, request, reply }) => {
      reply.code(302).header('Location', withQuery(realmImageUrl(realm, logoImage(params.night)), request.url)).send();
    },
  });
}

/** GET /user_avatars/<realm_id>/realm/<icon|logo|night_logo>.png: the uploaded image (public, like the real server's). */
export async function realmImageDownloadRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = storageFor(ctx);
  const notFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');
  app.route({
    method: 'GET',
    url: '/user_avatars/:realm_id/realm/:file',
    config: { auth: 'none', limited: true },
    handler: async (request, reply) => {
      const { realm_id, file } = request.params as { realm_id: string; file: string };
      const match = /^(icon|logo|night_logo)\.png$/.exec(file);
      if (!/^\d{1,9}$/.test(realm_id) || !match) throw notFound();
      const realm = await getRealm(ctx.db, Number(realm_id));
      const image = match[1] as RealmImage;
      const properties = (realm?.properties ?? {}) as Record<string, unknown>;
      if (!realm || properties[`${image}_source`] !== UPLOADED) throw notFound();
      const pathId = realmImagePathId(realm.id, image, Number(properties[`${image}_version`]));
      const stored = await storedFileSource(storage, pathId);
      if (!stored) throw notFound();
      reply
        .header('Content-Type', 'image/png')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'public, max-age=86400');
      return sendFile(request, reply, stored, { identity: pathId });
    },
  });
}
