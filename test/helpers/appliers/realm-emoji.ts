import { registerApplier } from './registry.js';

// realm_emoji update events carry the realm's whole emoji object.
registerApplier('realm_emoji', (state, event) => {
  if (event.op !== 'update') throw new Error(`unexpected realm_emoji op ${event.op}`);
  if ('realm_emoji' in state) state.realm_emoji = event.realm_emoji;
});
