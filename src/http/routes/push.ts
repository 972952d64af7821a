import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
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

/** The real server's older per-service routes (the mobile apps still call them); human users only. */
export async function legacyPushRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const humansOnly = (user: { is_bot: boolean }) => {
    if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  };
  const routes = [
    { url: '/users/me/apns_device_token', kind: 'apns' as const },
    { url: '/users/me/android_gcm_reg_id', kind: 'fcm' as const },
  ];
  for (const { url, kind } of routes) {
    defineRoute<{ token: string; appid?: string }>(app, {
      method: 'POST',
      url,
      params: kind === 'apns'
        ? { properties: { token: { type: 'string' }, appid: { type: 'string' } }, required: ['token', 'appid'] }
        : { properties: { token: { type: 'string' } }, required: ['token'] },
      allow: humansOnly,
      handler: async ({ params, user, meta }) => {
        await changePushDevices(ctx, meta, user.id, {
          type: 'RegisterKindToken', kind, token: params.token, appid: params.appid ?? '', now: Math.floor(meta.now.getTime() / 1000),
        });
      },
    });
    defineRoute<{ token: string }>(app, {
      method: 'DELETE',
      url,
      params: { properties: { token: { type: 'string' } }, required: ['token'] },
      allow: humansOnly,
      handler: async ({ params, user, meta }) => {
        await changePushDevices(ctx, meta, user.id, { type: 'RemoveKindToken', kind, token: params.token });
      },
    });
  }
}
