import { registerApplier } from './registry.js';

// /register has no attachments section (clients fetch GET /attachments), so these events change no
// registered state; tests check their payloads directly.
registerApplier('attachment', (_state, event) => {
  if (!['add', 'update', 'remove'].includes(event.op)) throw new Error(`attachment op ${event.op}`);
});
