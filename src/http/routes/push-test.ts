import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { ApiError, errors } from '../../domain/errors.js';
import type { AppServices } from '../services.js';

/**
 * POST /mobile_push/test_notification. This server has no push delivery (no bouncer, APNs or FCM
 * credentials): like the real server without them, a test notification to known devices is
 * accepted and dropped. The real server's checks still apply: humans only, and a given token must
 * be one of the user's registered devices.
 */
export default async function pushTestRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ token?: string }>(app, {
    method: 'POST',
    url: '/mobile_push/test_notification',
    params: { properties: { token: { type: 'string' } } },
    handler: async ({ params, user }) => {
      if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      if (params.token === undefined) return;
      const device = await ctx.db.selectFrom('push_devices').select('token').where('user_id', '=', user.id).where('token', '=', params.token).executeTakeFirst();
      if (!device) throw new ApiError('INVALID_PUSH_DEVICE_TOKEN', 400, 'Device not recognized');
    },
  });
}
