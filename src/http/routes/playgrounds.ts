import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { changePlaygrounds } from '../../services/playgrounds.js';
import type { AppServices } from '../services.js';

export default async function playgroundRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  // SPEC names the language parameter highlighter_language; the real server pygments_language.
  defineRoute<{ name: string; highlighter_language?: string; pygments_language?: string; url_template: string }>(app, {
    method: 'POST',
    url: '/realm/playgrounds',
    params: {
      properties: {
        name: { type: 'string' },
        highlighter_language: { type: 'string' },
        pygments_language: { type: 'string' },
        url_template: { type: 'string' },
      },
      required: ['name', 'url_template'],
    },
    handler: async ({ params, user, meta }) => {
      const language = params.highlighter_language ?? params.pygments_language;
      if (language === undefined) throw errors.missingArgument('highlighter_language');
      const playground_id = await ctx.commands.nextId('playground_id_seq');
      await changePlaygrounds(ctx, meta, {
        type: 'AddPlayground', actor: { user_id: user.id, role: user.role }, playground_id,
        name: params.name, pygments_language: language, url_template: params.url_template,
      });
      return { id: playground_id };
    },
  });

  defineRoute<{ playground_id: number }>(app, {
    method: 'DELETE',
    url: '/realm/playgrounds/:playground_id',
    params: { properties: { playground_id: { type: 'integer' } }, required: ['playground_id'] },
    handler: async ({ params, user, meta }) => {
      await changePlaygrounds(ctx, meta, { type: 'RemovePlayground', actor: { user_id: user.id, role: user.role }, playground_id: params.playground_id });
    },
  });
}
