import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { DEFAULT_USER_SETTINGS } from '../../domain/settings/defaults.js';
import { decideZcommand, ZcommandError } from '../../domain/settings/zcommands.js';
import { changeOwnSettings } from '../../services/settings.js';
import { mailerFor } from '../../services/mailer.js';
import { setTutorialStatus } from '../../services/tutorial.js';
import type { AppServices } from '../services.js';

/** Routes the web app calls that have no API documentation: /zcommand and the Zoom call button. */
export default async function webCommandRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ command: string }>(app, {
    method: 'POST',
    url: '/zcommand',
    params: { properties: { command: { type: 'string' } }, required: ['command'] },
    handler: async ({ params, user, realm, meta, request }) => {
      let outcome;
      try {
        outcome = decideZcommand(params.command, { ...DEFAULT_USER_SETTINGS, ...(user.settings as Record<string, unknown>) });
      } catch (error) {
        if (error instanceof ZcommandError) throw errors.badRequest(error.message);
        throw error;
      }
      if (outcome.change) await changeOwnSettings(ctx, meta, user, realm, { settings: outcome.change }, mailerFor(ctx.config, request.log));
      return outcome.msg === undefined ? {} : { msg: outcome.msg };
    },
  });

  // No video call provider is configured on this server: the real server's answer without Zoom credentials.
  defineRoute<{ is_video_call?: boolean }>(app, {
    method: 'POST',
    url: '/calls/zoom/create',
    params: { properties: { is_video_call: { type: 'boolean' } } },
    handler: async () => {
      throw errors.badRequest('Zoom credentials have not been configured');
    },
  });
}

/** POST /users/me/tutorial_status: the real server's human-only record of the web tutorial's progress. */
export async function tutorialStatusRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<{ status: string }>(app, {
    method: 'POST',
    url: '/users/me/tutorial_status',
    params: { properties: { status: { type: 'string' } }, required: ['status'] },
    handler: async ({ params, user, meta }) => {
      if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      if (params.status !== 'started' && params.status !== 'finished') throw errors.badRequest('Invalid status');
      await setTutorialStatus(ctx, meta, user.id, params.status);
    },
  });
}
