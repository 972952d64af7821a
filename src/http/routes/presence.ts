import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';
import { getUserByEmail, getUserById } from '../../read/users.js';
import { legacyPresence, presenceResponse, userPresence } from '../../read/presence.js';
import { realmHost } from '../../read/realm.js';
import { OFFLINE_THRESHOLD_SECS } from '../../domain/presence/rules.js';
import { pingPresence, presenceSources, type PresencePing } from '../../services/presence.js';
import { updateUserStatus, type UserStatusRequest } from '../../services/user-status.js';
import { defineRoute } from '../route.js';
import type { AppServices } from '../services.js';

/** Presence (POST /users/me/presence, GET /realm/presence, GET /users/{id or email}/presence) and POST /users/me/status. */
export default async function presenceRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<PresencePing>(app, {
    method: 'POST',
    url: '/users/me/presence',
    params: {
      properties: {
        status: { type: 'string' },
        ping_only: { type: 'boolean' },
        new_user_input: { type: 'boolean' },
        slim_presence: { type: 'boolean' },
      },
      required: ['status'],
    },
    handler: async ({ params, user, realm, meta, reply, ignored }) => {
      const result = await pingPresence(ctx, meta, user, realm, params);
      if (result.presencesJson === undefined) return {};
      // The presences are JSON text already (shared between pings): the envelope is written around it.
      const extra = ignored.length > 0 ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}` : '';
      reply
        .type('application/json; charset=utf-8')
        .send(`{"result":"success","msg":"","presences":${result.presencesJson},"server_timestamp":${JSON.stringify(result.server_timestamp)}${extra}}`);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/presence',
    handler: async ({ realm, meta }) => presenceResponse(ctx.db, realm, false, meta.now.getTime(), presenceSources(ctx)),
  });

  defineRoute<{ user_id_or_email: string }>(app, {
    method: 'GET',
    url: '/users/:user_id_or_email/presence',
    params: { properties: { user_id_or_email: { type: 'string' } }, required: ['user_id_or_email'] },
    handler: async ({ params, realm, meta }) => {
      const key = params.user_id_or_email;
      const target = /^\d+$/.test(key) ? await getUserById(ctx.db, Number(key)) : await getUserByEmail(ctx.db, realm.id, key, realmHost(realm));
      if (!target || target.realm_id !== realm.id || !target.is_active) throw errors.noSuchUser();
      if (target.is_bot) throw errors.badRequest('Presence is not supported for bot users.');
      const times = await userPresence(ctx.db, realm, target.id, presenceSources(ctx).local);
      if (!times) throw errors.badRequest(`No presence data for ${key}`);
      // This endpoint shows only status and timestamp, and "offline" once the data is stale.
      const entries = legacyPresence(times);
      const presence: Record<string, { status: string; timestamp: unknown }> = {};
      for (const [name, entry] of Object.entries(entries)) presence[name] = { status: entry.status as string, timestamp: entry.timestamp };
      if (Math.floor(meta.now.getTime() / 1000) - (presence.aggregated!.timestamp as number) > OFFLINE_THRESHOLD_SECS) presence.aggregated!.status = 'offline';
      return { presence };
    },
  });

  defineRoute<UserStatusRequest>(app, {
    method: 'POST',
    url: '/users/me/status',
    params: {
      properties: {
        away: { type: 'boolean' },
        status_text: { type: 'string' },
        emoji_name: { type: 'string' },
        emoji_code: { type: 'string' },
        reaction_type: { type: 'string' },
      },
    },
    handler: async ({ params, user, meta }) => {
      await updateUserStatus(ctx, meta, user, params);
      return {};
    },
  });
}
