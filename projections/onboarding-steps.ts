import { defineProjection } from './define.js';

export const onboardingStepsProjection = defineProjection({
  name: 'onboarding-steps',
  version: 1,
  tables: ['onboarding_steps'],
  handlers: {
    OnboardingStepMarked: async (trx, d) => {
      await trx
        .insertInto('onboarding_steps')
        .values({ user_id: d.user_id, onboarding_step: d.onboarding_step })
        .onConflict((oc) => oc.columns(['user_id', 'onboarding_step']).doNothing())
        .execute();
    },
  },
});
