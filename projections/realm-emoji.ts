import { defineProjection } from './define.js';

export const realmEmojiProjection = defineProjection({
  name: 'realm-emoji',
  version: 1,
  tables: ['realm_emoji'],
  handlers: {
    RealmEmojiAdded: async (trx, d) => {
      await trx
        .insertInto('realm_emoji')
        .values({
          id: d.emoji_id, realm_id: d.realm_id, name: d.name, author_id: d.author_id,
          file_name: d.file_name, path_id: d.path_id, content_type: d.content_type, still_path_id: d.still_path_id, deactivated: false,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    RealmEmojiDeactivated: async (trx, d) => {
      await trx.updateTable('realm_emoji').set({ deactivated: true }).where('id', '=', d.emoji_id).execute();
    },
  },
});
