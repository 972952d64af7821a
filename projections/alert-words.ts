import type { Trx } from '../src/projections-api.js';
import { defineProjection } from './define.js';

/** Every alert-word event carries the user's whole list: the rows are that list, numbered in its order. */
async function replaceList(trx: Trx, d: { user_id: number; alert_words: string[] }) {
  await trx.deleteFrom('alert_words').where('user_id', '=', d.user_id).execute();
  if (d.alert_words.length === 0) return;
  await trx
    .insertInto('alert_words')
    .values(d.alert_words.map((word, ordinal) => ({ user_id: d.user_id, word, ordinal })))
    .execute();
}

/** alert_words rows as the user typed them; the messages area reads them to flag has_alert_word. */
export const alertWordsProjection = defineProjection({
  name: 'alert-words',
  version: 2,
  tables: ['alert_words'],
  handlers: {
    AlertWordsAdded: (trx, d) => replaceList(trx, d),
    AlertWordsRemoved: (trx, d) => replaceList(trx, d),
  },
});
