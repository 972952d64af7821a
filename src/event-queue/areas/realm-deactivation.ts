import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';

// Its purpose is to flush open long-polls: the next GET /events is refused with REALM_DEACTIVATED.
registerTranslator('RealmDeactivated', async (event) => {
  const d = event.data as DataOf<'RealmDeactivated'>;
  return { audience: 'realm', forUser: () => [{ type: 'realm', op: 'deactivated', realm_id: d.realm_id }] };
});
