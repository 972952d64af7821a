import { registerApplier } from './registry.js';

const newestFirst = (a: any, b: any) => b.timestamp - a.timestamp || b.id - a.id;

registerApplier('drafts', (state, event) => {
  if (!state.drafts) return;
  if (event.op === 'add') state.drafts.push(...event.drafts);
  else if (event.op === 'update') {
    const index = state.drafts.findIndex((d: any) => d.id === event.draft.id);
    if (index >= 0) state.drafts[index] = event.draft;
  } else if (event.op === 'remove') state.drafts = state.drafts.filter((d: any) => d.id !== event.draft_id);
  else throw new Error(`drafts op ${event.op}`);
  state.drafts.sort(newestFirst);
});
