import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { formatRealmEmoji, getRealmEmoji } from '../../read/realm-emoji.js';
import { evolveRealmEmoji, type RealmEmojiRow } from '../../domain/realm-emoji/decider.js';
import type { RealmEmojiEvent } from '../../domain/realm-emoji/events.js';
import type { Translator } from '../types.js';
import { stateAsOf } from '../stream-history.js';

/** Every change sends the realm's whole emoji object as of that event, folded from the realm's emoji stream. */
const fullObject: Translator = async (event, db) => {
  const realmId = (event.data as { realm_id: number }).realm_id;
  const list = await stateAsOf<RealmEmojiRow[], RealmEmojiEvent>(db, event, [], evolveRealmEmoji);
  const realm_emoji = formatRealmEmoji(realmId, list);
  return {
    audience: 'realm',
    forUser: (r) => (r.realm.id === realmId ? [{ type: 'realm_emoji', op: 'update', realm_emoji }] : []),
  };
};

registerTranslator('RealmEmojiAdded', fullObject);
registerTranslator('RealmEmojiDeactivated', fullObject);

registerSection('realm_emoji', async ({ trx, realm }) => ({ realm_emoji: await getRealmEmoji(trx, realm.id) }));
