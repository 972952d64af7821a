import { defineProjection } from './define.js';

export const draftsProjection = defineProjection({
  name: 'drafts',
  version: 2,
  tables: ['drafts'],
  handlers: {
    DraftsCreated: async (trx, d) => {
      if (d.drafts.length === 0) return;
      await trx
        .insertInto('drafts')
        .values(d.drafts.map((draft) => ({ ...draft, user_id: d.user_id, to: JSON.stringify(draft.to) })))
        .execute();
    },
    DraftUpdated: async (trx, d) => {
      const { id, ...rest } = d.draft;
      await trx
        .updateTable('drafts')
        .set({ ...rest, to: JSON.stringify(rest.to) })
        .where('id', '=', id)
        .where('user_id', '=', d.user_id)
        .execute();
    },
    DraftDeleted: async (trx, d) => {
      await trx.deleteFrom('drafts').where('id', '=', d.draft_id).where('user_id', '=', d.user_id).execute();
    },
    // Drafts are sealed under the person's key: erasing them forgets them here too.
    UserErased: async (trx, d) => {
      await trx.deleteFrom('drafts').where('user_id', '=', d.user_id).execute();
    },
  },
});
