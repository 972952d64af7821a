import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { getUserByEmail } from '../../read/users.js';
import { realmHost } from '../../read/realm.js';
import type { AppServices } from '../services.js';

/**
 * Development-only login (the real server's dev_urls): an API key for any user from the email
 * alone. Registered only when the DEVELOPMENT setting is on; otherwise the URL does not exist.
 */
export default async function devLoginRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  if (!ctx.config.development) return;

  defineRoute<{ username: string }>(app, {
    method: 'POST',
    url: '/dev_fetch_api_key',
    auth: 'none',
    params: { properties: { username: { type: 'string' } }, required: ['username'] },
    handler: async ({ params, realm }) => {
      if (!realm) throw errors.authFailed();
      const user = await getUserByEmail(ctx.db, realm.id, params.username.trim(), realmHost(realm));
      if (!user) throw errors.authFailed();
      if (realm.deactivated) throw errors.realmDeactivated();
      if (!user.is_active) throw errors.userDeactivated();
      return { api_key: user.api_key, email: user.delivery_email, user_id: user.id };
    },
  });
}
