import { registerTranslator } from '../translators.js';
import type { DataOf } from '../../domain/events.js';
import { UPDATE_DICT_SETTINGS } from '../../domain/realm-admin/settings.js';

// One client event per changed setting, in the form the real server's do_set_realm_property
// (and its group-setting and authentication-method variants) sends it.
registerTranslator('RealmSettingChanged', async (event) => {
  const d = event.data as DataOf<'RealmSettingChanged'>;
  const clientEvent = UPDATE_DICT_SETTINGS.has(d.property)
    ? { type: 'realm', op: 'update_dict', property: 'default', data: { [d.property]: d.value } }
    : { type: 'realm', op: 'update', property: d.property, value: d.value };
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? [clientEvent] : []) };
});
