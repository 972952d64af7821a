import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';

/**
 * Video calls through BigBlueButton. This server has no BigBlueButton configuration, so no call
 * can ever be joined: the real server signs a join link here and refuses at the join step with
 * "BigBlueButton is not configured."; we refuse at once with the same words instead of handing out
 * a link that cannot work.
 */
export default async function callRoutes(app: FastifyInstance) {
  defineRoute<{ meeting_name: string; voice_only?: boolean }>(app, {
    method: 'GET',
    url: '/calls/bigbluebutton/create',
    params: { properties: { meeting_name: { type: 'string' }, voice_only: { type: 'boolean' } }, required: ['meeting_name'] },
    handler: async () => {
      throw errors.badRequest('BigBlueButton is not configured.');
    },
  });
}
