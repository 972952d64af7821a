import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { addSubmessage, type SubmessageParams } from '../../services/submessages.js';
import type { AppServices } from '../services.js';

/** POST /submessage: votes, options, tasks and strikes of widgets (the web app's polls and to-do lists). */
export default async function submessageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<SubmessageParams>(app, {
    method: 'POST',
    url: '/submessage',
    params: {
      properties: { message_id: { type: 'integer' }, msg_type: { type: 'string', maxLength: 100 }, content: { type: 'string' } },
      required: ['message_id', 'msg_type', 'content'],
    },
    handler: async ({ params, user, meta }) => {
      await addSubmessage(ctx, meta, user, params);
    },
  });
}
