import { defineProjection } from './define.js';

export const realmExportsProjection = defineProjection({
  name: 'realm-exports',
  version: 1,
  tables: ['realm_exports'],
  handlers: {
    RealmExportRequested: async (trx, d) => {
      await trx
        .insertInto('realm_exports')
        .values({ id: d.export_id, realm_id: d.realm_id, acting_user_id: d.acting_user_id, export_time: d.export_time, path_id: null, size: null, failed_timestamp: null, deleted_timestamp: null })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    RealmExportFinished: async (trx, d) => {
      await trx.updateTable('realm_exports').set({ path_id: d.path_id, size: d.size }).where('id', '=', d.export_id).execute();
    },
    RealmExportFailed: async (trx, d) => {
      await trx.updateTable('realm_exports').set({ failed_timestamp: d.failed_timestamp }).where('id', '=', d.export_id).execute();
    },
    RealmExportDeleted: async (trx, d) => {
      await trx.updateTable('realm_exports').set({ deleted_timestamp: d.deleted_timestamp }).where('id', '=', d.export_id).execute();
    },
  },
});
