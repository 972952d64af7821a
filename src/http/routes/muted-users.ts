import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamsSpec } from '../params.js';
import { muteUser, unmuteUser } from '../../services/muted-users.js';
import type { AppServices } from '../services.js';

export default async function mutedUserRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const params: ParamsSpec = { properties: { muted_user_id: { type: 'integer' } }, required: ['muted_user_id'] };

  defineRoute<{ muted_user_id: number }>(app, {
    method: 'POST',
    url: '/users/me/muted_users/:muted_user_id',
    params,
    handler: async ({ params, user, meta }) => { await muteUser(ctx, meta, user, params.muted_user_id); },
  });

  defineRoute<{ muted_user_id: number }>(app, {
    method: 'DELETE',
    url: '/users/me/muted_users/:muted_user_id',
    params,
    handler: async ({ params, user, meta }) => { await unmuteUser(ctx, meta, user, params.muted_user_id); },
  });
}
