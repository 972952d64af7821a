import t from 'tap';
import { decideRealmSettings, type RealmSettingsState } from '../../../src/domain/realm-admin/settings.js';
import { decideRealmDomains, emailOutsideDomains } from '../../../src/domain/realm-admin/domains.js';
import { decideDefaultStreamGroups, evolveDefaultStreamGroups, type DefaultStreamGroup } from '../../../src/domain/realm-admin/default-stream-groups.js';

const state: RealmSettingsState = {
  realm_id: 1,
  name: 'Org',
  properties: { message_retention_days: -1, edit_topic_policy: 5, create_multiuse_invite_group: 2, jitsi_server_url: null },
  system_groups: new Map([[1, 'role:owners'], [2, 'role:administrators'], [5, 'role:members'], [7, 'role:nobody']]),
  other_group_ids: new Set([20]),
  channel_ids: new Set([10]),
};
const update = (actor_role: number, settings: Record<string, unknown>) => decideRealmSettings({ type: 'UpdateRealmSettings', actor_role, settings }, state);

t.test('realm settings: one event per changed setting, owner-only ones refused to admins', async (t) => {
  const { events, changed } = update(100, { name: 'New', edit_topic_policy: 5, message_retention_days: 'unlimited', create_multiuse_invite_group: 7 });
  t.same(events.map((e) => [e.data.property, e.data.value]), [['name', 'New'], ['create_multiuse_invite_group', 7]], 'unchanged values make no event');
  t.same(changed, { name: 'updated', create_multiuse_invite_group: 7 });
  t.throws(() => update(200, { message_retention_days: 3 }), { code: 'UNAUTHORIZED_PRINCIPAL', message: 'Must be an organization owner' });
  t.throws(() => update(300, { name: 'x' }), { message: 'Must be an organization administrator' });
  t.same(update(200, { jitsi_server_url: 'default', new_stream_announcements_stream_id: 10 }).events.map((e) => e.data.property), ['new_stream_announcements_stream_id']);
  t.throws(() => update(100, { create_multiuse_invite_group: 1 }), { message: "'create_multiuse_invite_group' setting cannot be set to 'role:owners' group." });
  t.throws(() => update(100, { can_access_all_users_group: 7 }), { message: "'can_access_all_users_group' setting cannot be set to 'role:nobody' group." });
  t.throws(() => update(100, { message_content_edit_limit_seconds: 0 }), { message: "Bad value for 'message_content_edit_limit_seconds': 0" });
  t.same(update(100, { authentication_methods: { Email: true } }).events, [], 'email stays the one method');
});

t.test('realm domains and the sign-up restriction', async (t) => {
  const domains = [{ domain: 'a.example', allow_subdomains: true }];
  const domainState = { realm_id: 1, domains, emails_restricted_to_domains: true };
  t.match(decideRealmDomains({ type: 'RemoveRealmDomain', domain: 'a.example' }, domainState), [
    { type: 'RealmSettingChanged', data: { property: 'emails_restricted_to_domains', value: false } },
    { type: 'RealmDomainRemoved', data: { domain: 'a.example' } },
  ]);
  t.same(decideRealmDomains({ type: 'ChangeRealmDomain', domain: 'a.example', allow_subdomains: true }, domainState).map((e) => e.type), ['RealmDomainChanged'],
    'recorded even without a change, as the real server announces it');
  t.throws(() => decideRealmDomains({ type: 'AddRealmDomain', domain_id: 2, domain: 'a.example', allow_subdomains: false }, domainState),
    { message: 'The domain a.example is already a part of your organization.' });
  t.equal(emailOutsideDomains('x@b.a.example', true, domains), null);
  t.equal(emailOutsideDomains('x@B.A.EXAMPLE', true, domains), null);
  t.equal(emailOutsideDomains('x@ba.example', true, domains), 'Outside your domain.');
  t.equal(emailOutsideDomains('x@ba.example', false, domains), null);
});

t.test('default channel groups fold to the list each change leaves', async (t) => {
  let groups: DefaultStreamGroup[] = [];
  const apply = (command: Parameters<typeof decideDefaultStreamGroups>[0]) => {
    for (const e of decideDefaultStreamGroups(command, 1, groups)) groups = evolveDefaultStreamGroups(groups, e);
  };
  apply({ type: 'CreateDefaultStreamGroup', group_id: 3, name: 'G', description: 'd', channels: [{ id: 10, name: 'a', is_default: false }, { id: 10, name: 'a', is_default: false }] });
  t.same(groups, [{ id: 3, name: 'G', description: 'd', stream_ids: [10] }]);
  apply({ type: 'UpdateDefaultStreamGroupStreams', group_id: 3, op: 'add', channels: [{ id: 11, name: 'b', is_default: false }] });
  apply({ type: 'UpdateDefaultStreamGroupInfo', group_id: 3, new_description: 'e' });
  t.same(groups, [{ id: 3, name: 'G', description: 'e', stream_ids: [10, 11] }]);
  apply({ type: 'RemoveDefaultStreamGroup', group_id: 3 });
  t.same(groups, []);
});
