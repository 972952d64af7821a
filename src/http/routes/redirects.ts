import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, errors } from '../../domain/errors.js';
import { getAttachmentByPath } from '../../read/attachments.js';
import { getRealm, realmHost } from '../../read/realm.js';
import { apiEmail, avatarUrlFor, canSeeDeliveryEmail, getUserByEmail, getUserById, gravatarUrl, type UserRow } from '../../read/users.js';
import { mayAccessAttachment } from '../../services/attachments.js';
import { INACCESSIBLE_USER_AVATAR, canAccessUser } from '../../read/user-access.js';
import type { AppServices } from '../services.js';

/** The request's own query string, passed on to the target as the real server does. */
function withQuery(url: string, rawUrl: string): string {
  const at = rawUrl.indexOf('?');
  if (at === -1 || at === rawUrl.length - 1) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${rawUrl.slice(at + 1)}`;
}

const redirect = (reply: FastifyReply, url: string) => reply.code(302).header('Location', url).send();

/**
 * GET /avatar/{email_or_id}[/medium] (outside /api/v1): a redirect to the user's avatar. An email names
 * a user only as the viewer may see it (the address clients are given, or the real one when the
 * user's email_address_visibility lets the viewer see it); anyone not found gets the Gravatar of
 * what was asked, as on the real server, so the answer never tells whether a hidden address exists.
 */
export async function avatarRedirectRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  async function target(viewer: UserRow, emailOrId: string): Promise<UserRow | undefined> {
    if (/^\d+$/.test(emailOrId)) {
      const id = Number(emailOrId);
      if (!Number.isSafeInteger(id) || id > 2_147_483_647) return undefined;
      const user = await getUserById(ctx.db, id);
      return user && user.realm_id === viewer.realm_id ? user : undefined;
    }
    const realm = await getRealm(ctx.db, viewer.realm_id);
    if (!realm) return undefined;
    const host = realmHost(realm);
    const user = await getUserByEmail(ctx.db, viewer.realm_id, emailOrId, host);
    if (!user) return undefined;
    if (apiEmail(user, host).toLowerCase() === emailOrId.toLowerCase()) return user;
    return canSeeDeliveryEmail({ user_id: viewer.id, role: viewer.role, realm_id: viewer.realm_id }, user) ? user : undefined;
  }

  for (const medium of [false, true]) {
    app.route({
      method: 'GET',
      url: medium ? '/avatar/:email_or_id/medium' : '/avatar/:email_or_id',
      config: { auth: 'user', limited: true },
      handler: async (request, reply) => {
        const viewer = request.user;
        if (!viewer) throw errors.unauthorized();
        const { email_or_id } = request.params as { email_or_id: string };
        const user = await target(viewer, email_or_id);
        const realm = user ? await getRealm(ctx.db, viewer.realm_id) : undefined;
        // A guest limited by can_access_all_users_group gets the "Unknown user" avatar for those they cannot access.
        const hidden = user && realm ? !(await canAccessUser(ctx.db, realm, viewer, user)) : false;
        const url = hidden
          ? INACCESSIBLE_USER_AVATAR
          : user
            ? avatarUrlFor(user, true, false, medium)!
            : `${gravatarUrl(email_or_id, 1)}${medium ? '&s=500' : ''}`;
        return redirect(reply, withQuery(url, request.url));
      },
    });
  }
}

const THUMBNAIL_SIZES = new Set(['thumbnail', 'full']);

/**
 * GET /thumbnail?url=&size= (outside /api/v1). This server has no thumbnailing service, so like the
 * real server without one it redirects to the image itself, after the real server's checks: the size
 * is 'thumbnail' or 'full', and an uploaded file only for someone who may download it.
 */
export async function thumbnailRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const forbidden = (msg: string) => new ApiError('BAD_REQUEST', 403, msg);
  app.route({
    method: 'GET',
    url: '/thumbnail',
    config: { auth: 'user', limited: true },
    handler: async (request, reply) => {
      const user = request.user;
      if (!user) throw errors.unauthorized();
      const query = request.query as Record<string, unknown>;
      const url = query.url;
      const size = query.size;
      if (typeof url !== 'string') throw errors.missingArgument('url');
      if (typeof size !== 'string') throw errors.missingArgument('size');
      const path = url.replace(/^\//, '');
      if (path.startsWith('user_uploads/')) {
        let pathId: string;
        try {
          pathId = path.slice('user_uploads/'.length).split('?')[0]!.split('/').map(decodeURIComponent).join('/');
        } catch {
          throw forbidden('You are not authorized to view this file.');
        }
        const attachment = await getAttachmentByPath(ctx.db, pathId);
        if (!attachment || !(await mayAccessAttachment(ctx.db, user, attachment))) throw forbidden('You are not authorized to view this file.');
        if (!THUMBNAIL_SIZES.has(size)) throw forbidden('Invalid size.');
        return redirect(reply, `/${path}`);
      }
      if (!THUMBNAIL_SIZES.has(size)) throw forbidden('Invalid size.');
      // Only web addresses: a redirect to javascript: or data: would be ours to answer for.
      if (!/^https?:\/\/[^\s]+$/i.test(url)) throw errors.badRequest('Invalid URL');
      return redirect(reply, url);
    },
  });
}
