import { defineProjection } from './define.js';

export const botStorageProjection = defineProjection({
  name: 'bot-storage',
  version: 1,
  tables: ['bot_storage'],
  handlers: {
    // A sealed field whose key is gone reads as a string: nothing to fold (BotStorageForgotten follows).
    BotStorageSet: async (trx, d) => {
      if (typeof d.storage !== 'object' || d.storage === null) return;
      const rows = Object.entries(d.storage).map(([key, value]) => ({ user_id: d.user_id, key, value }));
      if (rows.length === 0) return;
      await trx
        .insertInto('bot_storage')
        .values(rows)
        .onConflict((oc) => oc.columns(['user_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
        .execute();
    },
    BotStorageRemoved: async (trx, d) => {
      if (!Array.isArray(d.keys) || d.keys.length === 0) return;
      await trx.deleteFrom('bot_storage').where('user_id', '=', d.user_id).where('key', 'in', d.keys).execute();
    },
    BotStorageForgotten: async (trx, d) => {
      await trx.deleteFrom('bot_storage').where('user_id', '=', d.user_id).execute();
    },
  },
});
