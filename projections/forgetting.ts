import { defineProjection } from './define.js';

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** Deleted messages waiting for the grace period before their keys are destroyed (src/services/forgetting.ts). */
export const forgettingProjection = defineProjection({
  name: 'forgetting',
  version: 1,
  tables: ['pending_shreds', 'legal_holds'],
  handlers: {
    MessagesDeleted: async (trx, d, e) => {
      if (d.message_ids.length === 0) return;
      await trx
        .insertInto('pending_shreds')
        .values(d.message_ids.map((id) => ({ message_id: id, realm_id: d.realm_id, stream_id: d.stream_id, deleted_at: seconds(e.metadata.time) })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
    MessagesShredded: async (trx, d) => {
      if (d.message_ids.length === 0) return;
      await trx.deleteFrom('pending_shreds').where('message_id', 'in', d.message_ids).execute();
    },
    LegalHoldChanged: async (trx, d, e) => {
      if (d.held) {
        await trx
          .insertInto('legal_holds')
          .values({ realm_id: d.realm_id, scope: d.scope, subject_id: d.subject_id, reason: d.reason, since: seconds(e.metadata.time) })
          .onConflict((oc) => oc.columns(['realm_id', 'scope', 'subject_id']).doUpdateSet({ reason: d.reason }))
          .execute();
      } else {
        await trx.deleteFrom('legal_holds').where('realm_id', '=', d.realm_id).where('scope', '=', d.scope).where('subject_id', '=', d.subject_id).execute();
      }
    },
  },
});
