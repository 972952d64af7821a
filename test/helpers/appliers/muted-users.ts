import { registerApplier } from './registry.js';

registerApplier('muted_users', (state, event) => {
  if ('muted_users' in state) state.muted_users = event.muted_users.map((m: Record<string, unknown>) => ({ ...m }));
});
