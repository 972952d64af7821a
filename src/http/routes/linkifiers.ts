import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { listLinkifiers } from '../../read/linkifiers.js';
import { addLinkifier, changeLinkifiers } from '../../services/linkifiers.js';
import type { AppServices } from '../services.js';
import { errors } from '../../domain/errors.js';
import { isAdminRole } from '../../domain/roles.js';

/** The real server checks the role before the parameters (the decider checks it again). */
function adminsOnly(user: { role: number }): void {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
}

export default async function linkifierRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const actorOf = (user: { id: number; role: number }) => ({ user_id: user.id, role: user.role });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/linkifiers',
    handler: async ({ realm }) => ({ linkifiers: await listLinkifiers(ctx.db, realm.id) }),
  });

  defineRoute<{ pattern: string; url_template: string }>(app, {
    method: 'POST',
    url: '/realm/filters',
    allow: adminsOnly,
    params: { properties: { pattern: { type: 'string' }, url_template: { type: 'string' } }, required: ['pattern', 'url_template'] },
    handler: async ({ params, user, meta }) => ({
      id: await addLinkifier(ctx, meta, { actor: actorOf(user), pattern: params.pattern, url_template: params.url_template }),
    }),
  });

  defineRoute<{ filter_id: number; pattern: string; url_template: string }>(app, {
    method: 'PATCH',
    url: '/realm/filters/:filter_id',
    allow: adminsOnly,
    params: {
      properties: { filter_id: { type: 'integer' }, pattern: { type: 'string' }, url_template: { type: 'string' } },
      required: ['filter_id', 'pattern', 'url_template'],
    },
    handler: async ({ params, user, meta }) => {
      await changeLinkifiers(ctx, meta, {
        type: 'UpdateLinkifier', actor: actorOf(user), linkifier_id: params.filter_id, pattern: params.pattern, url_template: params.url_template,
      });
    },
  });

  defineRoute<{ filter_id: number }>(app, {
    method: 'DELETE',
    url: '/realm/filters/:filter_id',
    allow: adminsOnly,
    params: { properties: { filter_id: { type: 'integer' } }, required: ['filter_id'] },
    handler: async ({ params, user, meta }) => {
      await changeLinkifiers(ctx, meta, { type: 'RemoveLinkifier', actor: actorOf(user), linkifier_id: params.filter_id });
    },
  });

  defineRoute<{ ordered_linkifier_ids: number[] }>(app, {
    method: 'PATCH',
    url: '/realm/linkifiers',
    allow: adminsOnly,
    params: { properties: { ordered_linkifier_ids: { type: 'array', items: { type: 'integer' } } }, required: ['ordered_linkifier_ids'] },
    handler: async ({ params, user, meta }) => {
      await changeLinkifiers(ctx, meta, { type: 'ReorderLinkifiers', actor: actorOf(user), ordered_linkifier_ids: params.ordered_linkifier_ids });
    },
  });
}
