import { sql } from 'kysely';
import { defineProjection } from './define.js';

export const realmsProjection = defineProjection({
  name: 'realms',
  version: 1,
  tables: ['realms'],
  handlers: {
    RealmCreated: async (trx, d) => {
      await trx
        .insertInto('realms')
        .values({
          id: d.realm_id,
          string_id: d.string_id,
          name: d.name,
          url: d.url,
          date_created: d.date_created,
          properties: JSON.stringify(d.properties),
          user_settings_defaults: JSON.stringify(d.user_settings_defaults),
        })
        .execute();
    },
    RealmPropertiesChanged: async (trx, d) => {
      await trx
        .updateTable('realms')
        .set({ properties: sql`properties || ${JSON.stringify(d.changes)}::jsonb` as never })
        .where('id', '=', d.realm_id)
        .execute();
    },
    RealmSettingChanged: async (trx, d) => {
      // The name has a column of its own; every other setting lives in `properties`.
      if (d.property === 'name') {
        await trx.updateTable('realms').set({ name: String(d.value) }).where('id', '=', d.realm_id).execute();
        return;
      }
      await trx
        .updateTable('realms')
        .set({ properties: sql`properties || ${JSON.stringify({ [d.property]: d.value })}::jsonb` as never })
        .where('id', '=', d.realm_id)
        .execute();
    },
    RealmImageChanged: async (trx, d) => {
      const changes = { [`${d.image}_source`]: d.source, [`${d.image}_version`]: d.version };
      await trx
        .updateTable('realms')
        .set({ properties: sql`properties || ${JSON.stringify(changes)}::jsonb` as never })
        .where('id', '=', d.realm_id)
        .execute();
    },
    RealmDeactivated: async (trx, d) => {
      await trx.updateTable('realms').set({ deactivated: true }).where('id', '=', d.realm_id).execute();
    },
    RealmReactivated: async (trx, d) => {
      await trx.updateTable('realms').set({ deactivated: false }).where('id', '=', d.realm_id).execute();
    },
    RealmUserSettingsDefaultsChanged: async (trx, d) => {
      await trx
        .updateTable('realms')
        .set({ user_settings_defaults: sql`user_settings_defaults || ${JSON.stringify(d.changes)}::jsonb` as never })
        .where('id', '=', d.realm_id)
        .execute();
    },
  },
});
