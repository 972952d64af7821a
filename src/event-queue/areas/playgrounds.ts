import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { formatPlayground, listPlaygrounds } from '../../read/playgrounds.js';
import { evolvePlaygrounds, type PlaygroundRow } from '../../domain/playgrounds/decider.js';
import type { PlaygroundEvent } from '../../domain/playgrounds/events.js';
import type { Translator } from '../types.js';
import { stateAsOf } from '../stream-history.js';

/** Every change sends the realm's full list as of that event, folded from the realm's playground stream. */
const fullList: Translator = async (event, db) => {
  const realmId = (event.data as { realm_id: number }).realm_id;
  const list = await stateAsOf<PlaygroundRow[], PlaygroundEvent>(db, event, [], evolvePlaygrounds);
  const realm_playgrounds = list.sort((a, b) => a.id - b.id).map(formatPlayground);
  return {
    audience: 'realm',
    forUser: (r) => (r.realm.id === realmId ? [{ type: 'realm_playgrounds', realm_playgrounds }] : []),
  };
};

registerTranslator('PlaygroundAdded', fullList);
registerTranslator('PlaygroundRemoved', fullList);

registerSection('realm_playgrounds', async ({ trx, realm }) => ({ realm_playgrounds: await listPlaygrounds(trx, realm.id) }));
