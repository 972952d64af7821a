import type { DataOf } from '../../domain/events.js';
import { nextOnboardingSteps } from '../../domain/onboarding/steps.js';
import { seenOnboardingSteps } from '../../read/onboarding-steps.js';
import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';

// Replaces realm.ts's empty placeholder for this section (same name: it keeps its place in the order).
registerSection('onboarding_steps', async ({ trx, user }) => ({ onboarding_steps: nextOnboardingSteps(await seenOnboardingSteps(trx, user.id)) }));

// The client event carries the whole list of steps left, to the user alone.
registerTranslator('OnboardingStepMarked', async (event) => {
  const d = event.data as DataOf<'OnboardingStepMarked'>;
  return { audience: new Set([d.user_id]), forUser: () => [{ type: 'onboarding_steps', onboarding_steps: nextOnboardingSteps(d.seen) }] };
});
