import { registerApplier } from './registry.js';

registerApplier('realm_domains', (state, event) => {
  if (!state.realm_domains) return;
  switch (event.op) {
    case 'add': state.realm_domains.push({ ...event.realm_domain }); return;
    case 'change': {
      const entry = state.realm_domains.find((d: any) => d.domain === event.realm_domain.domain);
      if (entry) entry.allow_subdomains = event.realm_domain.allow_subdomains;
      return;
    }
    case 'remove': state.realm_domains = state.realm_domains.filter((d: any) => d.domain !== event.domain); return;
    default: throw new Error(`realm_domains op ${event.op}`);
  }
});

registerApplier('default_stream_groups', (state, event) => {
  if ('realm_default_stream_groups' in state) state.realm_default_stream_groups = structuredClone(event.default_stream_groups);
});
