import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { readBotStorage, removeBotStorage, setBotStorage } from '../../services/bot-storage.js';
import type { AppServices } from '../services.js';

const KEYS = { type: 'array', items: { type: 'string' } } as const;

/** A JSON-decoded value can carry NUL escapes that the raw-field check does not see; text columns cannot hold them. */
function refuseNul(name: string, texts: Iterable<string>): void {
  for (const text of texts) if (text.includes('\u0000')) throw errors.badRequest(`${name} contains NULL (0x00) characters.`);
}

/** The bot framework's key-value storage (zulip_bots' StateHandler), keyed by the requesting user. */
export default async function botStorageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ storage: Record<string, string> }>(app, {
    method: 'PUT',
    url: '/bot_storage',
    params: { properties: { storage: { type: 'object', additionalProperties: { type: 'string' } } }, required: ['storage'] },
    handler: async ({ params, user, meta }) => {
      refuseNul('storage', Object.entries(params.storage).flat());
      await setBotStorage(ctx, meta, user.id, params.storage);
    },
  });

  defineRoute<{ keys?: string[] }>(app, {
    method: 'GET',
    url: '/bot_storage',
    params: { properties: { keys: KEYS } },
    handler: async ({ params, user }) => {
      refuseNul('keys', params.keys ?? []);
      return { storage: await readBotStorage(ctx, user.id, params.keys) };
    },
  });

  defineRoute<{ keys?: string[] }>(app, {
    method: 'DELETE',
    url: '/bot_storage',
    params: { properties: { keys: KEYS } },
    handler: async ({ params, user, meta }) => {
      refuseNul('keys', params.keys ?? []);
      await removeBotStorage(ctx, meta, user.id, params.keys);
    },
  });
}
