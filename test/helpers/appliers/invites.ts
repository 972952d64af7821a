import { registerApplier } from './registry.js';

// invites_changed only says "fetch GET /invites again": no registered state changes.
registerApplier('invites_changed', () => undefined);
