import { registerApplier } from './registry.js';

// /register holds no exports (the real server lists them with GET /export/realm only): the event
// changes no registered state; tests compare its list with GET /export/realm instead.
registerApplier('realm_export', () => undefined);
