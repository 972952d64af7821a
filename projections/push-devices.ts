import { defineProjection } from './define.js';

export const pushDevicesProjection = defineProjection({
  name: 'push_devices',
  version: 1,
  tables: ['push_devices'],
  handlers: {
    PushDeviceRegistered: async (trx, d) => {
      await trx
        .insertInto('push_devices')
        .values({ user_id: d.user_id, token: d.token, appid: d.appid, last_updated: d.time, kind: d.kind ?? null })
        .onConflict((oc) => oc.columns(['user_id', 'token']).doUpdateSet({ appid: d.appid, last_updated: d.time, kind: d.kind ?? null }))
        .execute();
    },
    PushDeviceRemoved: async (trx, d) => {
      await trx.deleteFrom('push_devices').where('user_id', '=', d.user_id).where('token', '=', d.token).execute();
    },
  },
});
