import { defineProjection } from './define.js';

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** Deleted messages waiting for the grace period before their keys are destroyed (src/services/forgetting.ts). */
export const forgettingProjection = defineProjection({
  name: 'forgetting',
  version: 1,
  tables: ['pending_shreds'],
  handlers: {
    MessagesDeleted: async (trx, d, e) => {
      if (d.message_ids.length === 0) return;
      await trx
        .insertInto('pending_shreds')
        .values(d.message_ids.map((id) => ({ message_id: id, realm_id: d.realm_id, deleted_at: seconds(e.metadata.time) })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
    MessagesShredded: async (trx, d) => {
      if (d.message_ids.length === 0) return;
      await trx.deleteFrom('pending_shreds').where('message_id', 'in', d.message_ids).execute();
    },
  },
});
