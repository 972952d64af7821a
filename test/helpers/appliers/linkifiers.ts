import { registerApplier } from './registry.js';

// Linkifier and playground events carry the realm's full list.
registerApplier('realm_linkifiers', (state, event) => {
  if ('realm_linkifiers' in state) state.realm_linkifiers = event.realm_linkifiers;
});

registerApplier('realm_playgrounds', (state, event) => {
  if ('realm_playgrounds' in state) state.realm_playgrounds = event.realm_playgrounds;
});
