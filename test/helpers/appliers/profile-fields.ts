import { registerApplier } from './registry.js';

registerApplier('custom_profile_fields', (state, event) => {
  if ('custom_profile_fields' in state) state.custom_profile_fields = event.fields.map((f: Record<string, unknown>) => ({ ...f }));
});
