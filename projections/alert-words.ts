import { defineProjection } from './define.js';

/** alert_words rows (lower-cased); the messages area reads them to flag has_alert_word. */
export const alertWordsProjection = defineProjection({
  name: 'alert-words',
  version: 1,
  tables: ['alert_words'],
  handlers: {
    AlertWordsAdded: async (trx, d) => {
      if (d.words.length === 0) return;
      await trx
        .insertInto('alert_words')
        .values(d.words.map((word) => ({ user_id: d.user_id, word })))
        .onConflict((oc) => oc.columns(['user_id', 'word']).doNothing())
        .execute();
    },
    AlertWordsRemoved: async (trx, d) => {
      if (d.words.length === 0) return;
      await trx.deleteFrom('alert_words').where('user_id', '=', d.user_id).where('word', 'in', d.words).execute();
    },
  },
});
