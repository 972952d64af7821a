import { registerApplier } from './registry.js';

// /register holds no messages: a submessage changes no registered state.
registerApplier('submessage', () => undefined);
