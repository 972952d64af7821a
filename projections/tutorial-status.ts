import { defineProjection } from './define.js';

export const tutorialStatusProjection = defineProjection({
  name: 'tutorial-status',
  version: 1,
  tables: ['tutorial_status'],
  handlers: {
    TutorialStatusChanged: async (trx, d) => {
      await trx
        .insertInto('tutorial_status')
        .values({ user_id: d.user_id, status: d.status })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ status: d.status }))
        .execute();
    },
  },
});
