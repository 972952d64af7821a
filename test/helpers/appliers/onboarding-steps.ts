import { registerApplier } from './registry.js';

// The event carries the whole list of steps left.
registerApplier('onboarding_steps', (state, event) => {
  if ('onboarding_steps' in state) state.onboarding_steps = event.onboarding_steps.map((s: Record<string, unknown>) => ({ ...s }));
});
