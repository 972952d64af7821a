import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { changePushDevices } from '../../services/push.js';
import type { AppServices } from '../services.js';

export default async function pushRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ token: string; appid: string }>(app, {
    method: 'POST',
    url: '/users/me/push_device_token',
    params: { properties: { token: { type: 'string' }, appid: { type: 'string' } }, required: ['token', 'appid'] },
    handler: async ({ params, user, meta }) => {
      await changePushDevices(ctx, meta, user.id, {
        type: 'RegisterPushDevice', token: params.token, appid: params.appid, now: Math.floor(meta.now.getTime() / 1000),
      });
    },
  });

  defineRoute<{ token: string }>(app, {
    method: 'DELETE',
    url: '/users/me/push_device_token',
    params: { properties: { token: { type: 'string' } }, required: ['token'] },
    handler: async ({ params, user, meta }) => {
      await changePushDevices(ctx, meta, user.id, { type: 'RemovePushDevice', token: params.token });
    },
  });
}
