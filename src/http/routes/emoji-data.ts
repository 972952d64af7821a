import type { FastifyInstance } from 'fastify';
import { emojiNamesByCode } from '../../markdown/emoji.js';
import { EMOJI_DATA_PATH } from '../../domain/realm/server-catalogs.js';

/** The file /register's server_emoji_data_url points at: every Unicode emoji code this server accepts, with its names. */
export async function emojiDataRoutes(app: FastifyInstance) {
  const body = JSON.stringify({ code_to_names: emojiNamesByCode() });
  app.route({
    method: 'GET',
    url: EMOJI_DATA_PATH,
    config: { auth: 'none', limited: true },
    handler: async (_request, reply) =>
      reply.header('Content-Type', 'application/json').header('Cache-Control', 'public, max-age=86400').send(body),
  });
}
