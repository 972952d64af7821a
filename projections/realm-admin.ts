import { defineProjection } from './define.js';

/** Allowed email domains and default channel groups. */
export const realmAdminProjection = defineProjection({
  name: 'realm-admin',
  version: 1,
  tables: ['realm_domains', 'default_stream_groups'],
  handlers: {
    RealmDomainAdded: async (trx, d) => {
      await trx
        .insertInto('realm_domains')
        .values({ id: d.domain_id, realm_id: d.realm_id, domain: d.domain, allow_subdomains: d.allow_subdomains })
        .execute();
    },
    RealmDomainChanged: async (trx, d) => {
      await trx.updateTable('realm_domains').set({ allow_subdomains: d.allow_subdomains })
        .where('realm_id', '=', d.realm_id).where('domain', '=', d.domain).execute();
    },
    RealmDomainRemoved: async (trx, d) => {
      await trx.deleteFrom('realm_domains').where('realm_id', '=', d.realm_id).where('domain', '=', d.domain).execute();
    },
    DefaultStreamGroupCreated: async (trx, d) => {
      await trx
        .insertInto('default_stream_groups')
        .values({ id: d.group_id, realm_id: d.realm_id, name: d.name, description: d.description, stream_ids: JSON.stringify(d.stream_ids) })
        .execute();
    },
    DefaultStreamGroupChanged: async (trx, d) => {
      await trx.updateTable('default_stream_groups')
        .set({ name: d.name, description: d.description, stream_ids: JSON.stringify(d.stream_ids) })
        .where('id', '=', d.group_id).execute();
    },
    DefaultStreamGroupRemoved: async (trx, d) => {
      await trx.deleteFrom('default_stream_groups').where('id', '=', d.group_id).execute();
    },
  },
});
