import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { Db } from '../../db/database.js';
import { listRealmDomains } from '../../services/realm-domains.js';
import { formatDefaultStreamGroups, listDefaultStreamGroupRows } from '../../services/default-stream-groups.js';
import { evolveDefaultStreamGroups, type DefaultStreamGroup } from '../../domain/realm-admin/default-stream-groups.js';
import type { RealmAdminEvent } from '../../domain/realm-admin/events.js';
import { Role } from '../../domain/roles.js';
import { realmImageUrl } from '../../services/realm-images.js';
import { stateAsOf } from '../stream-history.js';
import type { Translator } from '../types.js';
import type { DataOf } from '../../domain/events.js';
import { UPDATE_DICT_SETTINGS } from '../../domain/realm-admin/settings.js';

// These sections replace the empty stubs that src/event-queue/areas/realm.ts registers first.

// One client event per changed setting, in the form the real server's do_set_realm_property
// (and its group-setting and authentication-method variants) sends it.
registerTranslator('RealmSettingChanged', async (event) => {
  const d = event.data as DataOf<'RealmSettingChanged'>;
  const clientEvent = UPDATE_DICT_SETTINGS.has(d.property)
    ? { type: 'realm', op: 'update_dict', property: 'default', data: { [d.property]: d.value } }
    : { type: 'realm', op: 'update', property: d.property, value: d.value };
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? [clientEvent] : []) };
});

// Allowed email domains: the documented realm_domains events, and the list in /register.
registerSection('realm_domains', async ({ trx, realm }) => ({ realm_domains: await listRealmDomains(trx as Db, realm.id) }));

registerTranslator('RealmDomainAdded', async (event) => {
  const d = event.data as DataOf<'RealmDomainAdded'>;
  const clientEvent = { type: 'realm_domains', op: 'add', realm_domain: { domain: d.domain, allow_subdomains: d.allow_subdomains } };
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? [clientEvent] : []) };
});

registerTranslator('RealmDomainChanged', async (event) => {
  const d = event.data as DataOf<'RealmDomainChanged'>;
  const clientEvent = { type: 'realm_domains', op: 'change', realm_domain: { domain: d.domain, allow_subdomains: d.allow_subdomains } };
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? [clientEvent] : []) };
});

registerTranslator('RealmDomainRemoved', async (event) => {
  const d = event.data as DataOf<'RealmDomainRemoved'>;
  const clientEvent = { type: 'realm_domains', op: 'remove', domain: d.domain };
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? [clientEvent] : []) };
});

// Default channel groups: the whole list with each change, as of that change; guests get none,
// as with default channels.
registerSection('default_stream_groups', async ({ trx, user, realm }) => ({
  realm_default_stream_groups: user.role === Role.GUEST
    ? []
    : await formatDefaultStreamGroups(trx as Db, await listDefaultStreamGroupRows(trx as Db, realm.id)),
}));

const groupsList: Translator = async (event, db) => {
  const realmId = (event.data as { realm_id: number }).realm_id;
  const groups = await stateAsOf<DefaultStreamGroup[], RealmAdminEvent>(db, event, [], evolveDefaultStreamGroups);
  const default_stream_groups = await formatDefaultStreamGroups(db, groups);
  return {
    audience: 'realm',
    forUser: (r) => (r.realm.id === realmId && r.user.role !== Role.GUEST ? [{ type: 'default_stream_groups', default_stream_groups }] : []),
  };
};
for (const type of ['DefaultStreamGroupCreated', 'DefaultStreamGroupChanged', 'DefaultStreamGroupRemoved']) registerTranslator(type, groupsList);

// Icon and logos: realm/update_dict with property icon, logo or night_logo, as the real server sends them.
registerTranslator('RealmImageChanged', async (event) => {
  const d = event.data as DataOf<'RealmImageChanged'>;
  return {
    audience: 'realm',
    forUser: (r) => (r.realm.id === d.realm_id
      ? [{
        type: 'realm', op: 'update_dict', property: d.image,
        data: { [`${d.image}_url`]: realmImageUrl(r.realm, d.image, d.source, d.version), [`${d.image}_source`]: d.source },
      }]
      : []),
  };
});
