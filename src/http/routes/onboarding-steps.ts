import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { UnknownOnboardingStep } from '../../domain/onboarding/steps.js';
import { markOnboardingStep } from '../../services/onboarding-steps.js';
import type { AppServices } from '../services.js';

/** POST /users/me/onboarding_steps: the web app dismissing a one-time notice (humans only, as on the real server). */
export default async function onboardingStepRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<{ onboarding_step: string }>(app, {
    method: 'POST',
    url: '/users/me/onboarding_steps',
    params: { properties: { onboarding_step: { type: 'string' } }, required: ['onboarding_step'] },
    handler: async ({ params, user, meta }) => {
      if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      try {
        await markOnboardingStep(ctx, meta, user.id, params.onboarding_step);
      } catch (error) {
        if (error instanceof UnknownOnboardingStep) throw errors.badRequest(error.message);
        throw error;
      }
    },
  });
}
