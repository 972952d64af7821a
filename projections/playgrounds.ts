import { defineProjection } from './define.js';

export const playgroundsProjection = defineProjection({
  name: 'playgrounds',
  version: 1,
  tables: ['playgrounds'],
  handlers: {
    PlaygroundAdded: async (trx, d) => {
      await trx
        .insertInto('playgrounds')
        .values({ id: d.playground_id, realm_id: d.realm_id, name: d.name, pygments_language: d.pygments_language, url_template: d.url_template })
        .execute();
    },
    PlaygroundRemoved: async (trx, d) => {
      await trx.deleteFrom('playgrounds').where('id', '=', d.playground_id).execute();
    },
  },
});
