import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { listDrafts, MAX_DRAFTS_IN_REGISTER_RESPONSE } from '../../read/drafts.js';

// Drafts events go only to their owner.
registerTranslator('DraftsCreated', async (event) => {
  const d = event.data as DataOf<'DraftsCreated'>;
  return { audience: new Set([d.user_id]), forUser: () => [{ type: 'drafts', op: 'add', drafts: d.drafts }] };
});

registerTranslator('DraftUpdated', async (event) => {
  const d = event.data as DataOf<'DraftUpdated'>;
  return { audience: new Set([d.user_id]), forUser: () => [{ type: 'drafts', op: 'update', draft: d.draft }] };
});

registerTranslator('DraftDeleted', async (event) => {
  const d = event.data as DataOf<'DraftDeleted'>;
  // Also when synchronization is turned off: the server copies are gone, and every client's
  // registered state must say so (a fresh /register returns no drafts then).
  return { audience: new Set([d.user_id]), forUser: () => [{ type: 'drafts', op: 'remove', draft_id: d.draft_id }] };
});

registerSection('drafts', async ({ trx, user }) => {
  if (user.settings.enable_drafts_synchronization === false) return { drafts: [] };
  return { drafts: await listDrafts(trx, user.id, 'newest first', MAX_DRAFTS_IN_REGISTER_RESPONSE) };
});
