import { defineProjection } from './define.js';

export const linkifiersProjection = defineProjection({
  name: 'linkifiers',
  version: 1,
  tables: ['linkifiers'],
  handlers: {
    LinkifierAdded: async (trx, d) => {
      await trx
        .insertInto('linkifiers')
        .values({ id: d.linkifier_id, realm_id: d.realm_id, pattern: d.pattern, url_template: d.url_template, order: d.order })
        .execute();
    },
    LinkifierUpdated: async (trx, d) => {
      await trx.updateTable('linkifiers').set({ pattern: d.pattern, url_template: d.url_template }).where('id', '=', d.linkifier_id).execute();
    },
    LinkifierRemoved: async (trx, d) => {
      await trx.deleteFrom('linkifiers').where('id', '=', d.linkifier_id).execute();
    },
    LinkifiersReordered: async (trx, d) => {
      for (const [order, id] of d.ordered_linkifier_ids.entries()) {
        await trx.updateTable('linkifiers').set({ order }).where('id', '=', id).where('realm_id', '=', d.realm_id).execute();
      }
    },
  },
});
