import type { DataOf } from '../../domain/events.js';
import { listAlertWords } from '../../services/alert-words.js';
import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';

registerSection('alert_words', async ({ trx, user }) => ({ alert_words: await listAlertWords(trx, user.id) }));

// Both carry the whole new list, which is what the client event holds.
for (const type of ['AlertWordsAdded', 'AlertWordsRemoved'] as const) {
  registerTranslator(type, async (event) => {
    const d = event.data as DataOf<typeof type>;
    return { audience: new Set([d.user_id]), forUser: () => [{ type: 'alert_words', alert_words: [...d.alert_words] }] };
  });
}
