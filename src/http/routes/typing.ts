import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { sendTypingNotification, type TypingRequest } from '../../services/typing.js';
import type { AppServices } from '../services.js';

export default async function typingRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<Partial<TypingRequest> & { op: 'start' | 'stop' }>(app, {
    method: 'POST',
    url: '/typing',
    params: {
      properties: {
        type: { type: 'string', enum: ['direct', 'stream', 'channel'] },
        op: { type: 'string', enum: ['start', 'stop'] },
        to: { type: 'array', items: { type: 'integer' } },
        stream_id: { type: 'integer' },
        topic: { type: 'string' },
      },
      required: ['op'],
    },
    handler: async ({ params, user, meta }) => {
      await sendTypingNotification(ctx, meta, user, { ...params, type: params.type ?? 'direct' });
      return {};
    },
  });
}
