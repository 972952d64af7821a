import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { setSubscriptionProperties } from '../../services/channels.js';
import type { AppServices } from '../services.js';

/**
 * PATCH /users/me/subscriptions/{stream_id}: the real server's older one-property form of
 * POST /users/me/subscriptions/properties, answered by the same code (same checks, errors, events).
 */
export default async function subscriptionPropertyRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<{ stream_id: number; property: string; value: boolean | number | string }>(app, {
    method: 'PATCH',
    url: '/users/me/subscriptions/:stream_id',
    params: {
      properties: {
        stream_id: { type: 'integer' },
        property: { type: 'string' },
        value: { anyOf: [{ type: 'boolean' }, { type: 'integer' }, { type: 'string' }] },
      },
      required: ['stream_id', 'property', 'value'],
    },
    handler: async ({ params, user, realm, meta }) => {
      await setSubscriptionProperties(ctx, meta, user, realm, [{ stream_id: params.stream_id, property: params.property, value: params.value }]);
    },
  });
}
