import { registerApplier } from './registry.js';

registerApplier('custom_profile_fields', (state, event) => {
  if ('custom_profile_fields' in state) state.custom_profile_fields = event.fields.map((f: Record<string, unknown>) => ({ ...f }));
  // The real client's rule: values of a field that is gone are dropped from every user.
  const ids = new Set(event.fields.map((f: { id: number }) => String(f.id)));
  for (const user of state.realm_users ?? []) {
    if (!user.profile_data) continue;
    for (const key of Object.keys(user.profile_data)) if (!ids.has(key)) delete user.profile_data[key];
  }
});
