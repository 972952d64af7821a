import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { listLinkifiers } from '../../read/linkifiers.js';
import { evolveLinkifiers, type LinkifierRow } from '../../domain/linkifiers/decider.js';
import type { LinkifierEvent } from '../../domain/linkifiers/events.js';
import type { Translator } from '../types.js';
import { stateAsOf } from '../stream-history.js';

/**
 * Every change sends the realm's full ordered list as of that event (folded from the realm's
 * linkifier stream, so a queue read later still gets the list each event produced), and only to
 * queues that declared the linkifier_url_template capability.
 */
const fullList: Translator = async (event, db) => {
  const realmId = (event.data as { realm_id: number }).realm_id;
  const list = await stateAsOf<LinkifierRow[], LinkifierEvent>(db, event, [], evolveLinkifiers);
  const realm_linkifiers = [...list]
    .sort((a, b) => a.order - b.order || a.id - b.id)
    .map(({ id, pattern, url_template }) => ({ id, pattern, url_template }));
  return {
    audience: 'realm',
    forUser: (r) => (r.realm.id === realmId && r.queue.client_capabilities.linkifier_url_template
      ? [{ type: 'realm_linkifiers', realm_linkifiers }]
      : []),
  };
};

for (const type of ['LinkifierAdded', 'LinkifierUpdated', 'LinkifierRemoved', 'LinkifiersReordered']) registerTranslator(type, fullList);

registerSection('realm_linkifiers', async ({ trx, realm, options }) => ({
  realm_linkifiers: options.client_capabilities.linkifier_url_template ? await listLinkifiers(trx, realm.id) : [],
}));

// Before feature level 176 clients read `realm_filters` (url_format); that form is no longer served.
registerSection('realm_filters', async () => ({ realm_filters: [] }));
