import { defineProjection } from './define.js';

/** muted_users rows; the send path reads who muted a sender, read receipts read both directions. */
export const mutedUsersProjection = defineProjection({
  name: 'muted-users',
  version: 1,
  tables: ['muted_users'],
  handlers: {
    UserMuted: async (trx, d) => {
      await trx
        .insertInto('muted_users')
        .values({ user_id: d.user_id, muted_user_id: d.muted_user_id, date_muted: d.date_muted })
        .onConflict((oc) => oc.columns(['user_id', 'muted_user_id']).doUpdateSet({ date_muted: d.date_muted }))
        .execute();
    },
    UserUnmuted: async (trx, d) => {
      await trx.deleteFrom('muted_users').where('user_id', '=', d.user_id).where('muted_user_id', '=', d.muted_user_id).execute();
    },
  },
});
