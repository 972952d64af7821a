import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { realmHost } from '../../read/realm.js';
import { channelEmailAddress, requireAccessibleChannel } from '../../services/channel-email.js';
import type { AppServices } from '../services.js';

export default async function channelEmailRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ stream_id: number }>(app, {
    method: 'GET',
    url: '/streams/:stream_id/email_address',
    params: { properties: { stream_id: { type: 'integer' } }, required: ['stream_id'] },
    handler: async ({ params, user, realm }) => {
      const stream = await requireAccessibleChannel(ctx.db, user, params.stream_id);
      return { email: channelEmailAddress(stream, user, realmHost(realm)) };
    },
  });
}
