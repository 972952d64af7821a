import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { MAX_ALERT_WORD_LENGTH } from '../../domain/alert-words/decider.js';
import { addAlertWords, listAlertWords, removeAlertWords } from '../../services/alert-words.js';
import type { AppServices } from '../services.js';

export default async function alertWordRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/users/me/alert_words',
    handler: async ({ user }) => ({ alert_words: await listAlertWords(ctx.db, user.id) }),
  });

  defineRoute<{ alert_words: string[] }>(app, {
    method: 'POST',
    url: '/users/me/alert_words',
    params: {
      properties: { alert_words: { type: 'array', items: { type: 'string', maxLength: MAX_ALERT_WORD_LENGTH } } },
      required: ['alert_words'],
    },
    handler: async ({ params, user, meta }) => ({ alert_words: await addAlertWords(ctx, meta, user.id, params.alert_words) }),
  });

  defineRoute<{ alert_words: string[] }>(app, {
    method: 'DELETE',
    url: '/users/me/alert_words',
    params: { properties: { alert_words: { type: 'array', items: { type: 'string' } } }, required: ['alert_words'] },
    handler: async ({ params, user, meta }) => ({ alert_words: await removeAlertWords(ctx, meta, user.id, params.alert_words) }),
  });
}
