import { getRealm } from '../../read/realm.js';
import { listRealmExports, realmOwnerIds } from '../../read/realm-exports.js';
import { registerTranslator } from '../translators.js';

// Every change of an export sends the owners (the only ones who see exports) the whole list, as
// the real server does. It is read when the event is prepared, so it may already include later changes.
for (const type of ['RealmExportRequested', 'RealmExportFinished', 'RealmExportFailed', 'RealmExportDeleted'] as const) {
  registerTranslator(type, async (event, db) => {
    const realmId = (event.data as { realm_id: number }).realm_id;
    const realm = await getRealm(db, realmId);
    if (!realm) return null;
    const exports = await listRealmExports(db, realmId, realm.url);
    return { audience: new Set(await realmOwnerIds(db, realmId)), forUser: () => [{ type: 'realm_export', exports }] };
  });
}
