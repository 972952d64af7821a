import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

const register = { event_types: ['default_stream_groups'], fetch_event_types: ['default_stream_groups'] };

t.test('default channel groups: create, rename, change channels, delete', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const guest = await s.user(Role.GUEST, 'Guest');
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'design' }, { name: 'eng' }, { name: 'ops' }, { name: 'lobby' }] });
  const idOf = async (name: string) => (await s.api('GET', '/get_stream_id', admin, { stream: name })).body.stream_id as number;
  await s.api('POST', '/default_streams', admin, { stream_id: await idOf('lobby') });

  const created = await verifyAction(t, s, member, () => s.api('POST', '/default_stream_groups/create', admin, {
    group_name: 'Builders', description: 'Those who build', stream_names: ['eng', 'design'],
  }), { register });
  t.equal(created.length, 1);
  const [group] = created[0]!.default_stream_groups;
  t.match(group, { name: 'Builders', description: 'Those who build', streams: [{ name: 'design' }, { name: 'eng' }] });
  const id = group.id as number;

  await verifyAction(t, s, member, () => s.api('POST', '/default_stream_groups/create', admin, { group_name: 'Ops', description: '', stream_names: ['ops'] }), { register });
  const renamed = await verifyAction(t, s, member, () => s.api('PATCH', `/default_stream_groups/${id}`, admin, { new_group_name: 'Makers', new_description: 'Makers all' }), { register });
  // The name and the description change one after the other, each with its event (as on the real server).
  t.equal(renamed.length, 2);
  t.match(renamed[0]!.default_stream_groups, [{ id, name: 'Makers', description: 'Those who build' }, { name: 'Ops' }]);
  t.match(renamed[1]!.default_stream_groups, [{ id, name: 'Makers', description: 'Makers all' }, { name: 'Ops' }]);
  const added = await verifyAction(t, s, member, () => s.api('PATCH', `/default_stream_groups/${id}/streams`, admin, { op: 'add', stream_names: ['ops'] }), { register });
  t.same(added[0]!.default_stream_groups[0].streams.map((c: { name: string }) => c.name), ['design', 'eng', 'ops']);
  await verifyAction(t, s, member, () => s.api('PATCH', `/default_stream_groups/${id}/streams`, admin, { op: 'remove', stream_names: ['design', 'eng'] }), { register });
  t.same((await verifyAction(t, s, guest, () => s.api('DELETE', `/default_stream_groups/${id}`, admin), { register })), [], 'guests get no groups');
  const state = (await s.api('POST', '/register', member, register)).body;
  t.match(state.realm_default_stream_groups, [{ name: 'Ops', streams: [{ name: 'ops' }] }]);
  t.equal(state.realm_default_stream_groups.length, 1);

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical read tables after rebuild');
});

t.test('default channel groups: permissions and errors', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'eng' }, { name: 'lobby' }] });
  await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'secret' }], invite_only: true });
  const lobby = (await s.api('GET', '/get_stream_id', admin, { stream: 'lobby' })).body.stream_id as number;
  await s.api('POST', '/default_streams', admin, { stream_id: lobby });
  await s.api('POST', '/default_stream_groups/create', admin, { group_name: 'G', description: '', stream_names: ['eng'] });
  const id = (await s.api('POST', '/register', admin, register)).body.realm_default_stream_groups[0].id as number;

  t.same((await s.api('POST', '/default_stream_groups/create', member, { group_name: 'M', description: '', stream_names: [] })).body,
    { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  t.equal((await s.api('DELETE', `/default_stream_groups/${id}`, member)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  // The administrator check comes before the parameters, as the real server's require_realm_admin.
  t.equal((await s.api('POST', '/default_stream_groups/create', member, {})).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('PATCH', `/default_stream_groups/${id}/streams`, member, {})).body.msg, 'Must be an organization administrator');
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['POST', '/default_stream_groups/create', { group_name: 'G', description: '', stream_names: [] }, "Default channel group 'G' already exists"],
    ['POST', '/default_stream_groups/create', { group_name: ' ', description: '', stream_names: [] }, "Invalid default channel group name ' '"],
    ['POST', '/default_stream_groups/create', { group_name: 'x'.repeat(61), description: '', stream_names: [] }, 'Default channel group name too long (limit: 60 characters)'],
    ['POST', '/default_stream_groups/create', { group_name: 'H', description: '', stream_names: ['nowhere'] }, "Invalid channel name 'nowhere'"],
    ['POST', '/default_stream_groups/create', { group_name: 'H', description: '', stream_names: ['secret'] }, "Invalid channel name 'secret'"],
    ['POST', '/default_stream_groups/create', { group_name: 'H', description: '', stream_names: ['lobby'] }, "'lobby' is a default channel and cannot be added to 'H'"],
    ['PATCH', '/default_stream_groups/424242', { new_group_name: 'X' }, "Default channel group with id '424242' does not exist."],
    ['PATCH', `/default_stream_groups/${id}`, {}, 'You must pass "new_description" or "new_group_name".'],
    ['PATCH', `/default_stream_groups/${id}`, { new_group_name: 'G' }, "This default channel group is already named 'G'"],
    ['PATCH', `/default_stream_groups/${id}/streams`, { op: 'add', stream_names: ['eng'] }, "Channel 'eng' is already present in default channel group 'G'"],
    ['PATCH', `/default_stream_groups/${id}/streams`, { op: 'remove', stream_names: ['lobby'] }, "Channel 'lobby' is not present in default channel group 'G'"],
    ['PATCH', `/default_stream_groups/${id}/streams`, { op: 'swap', stream_names: ['eng'] }, 'Invalid value for "op". Specify one of "add" or "remove".'],
    ['DELETE', '/default_stream_groups/424242', {}, "Default channel group with id '424242' does not exist."],
  ];
  for (const [method, path, params, msg] of cases) {
    t.same((await s.api(method, path, admin, params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, `${method} ${path} ${JSON.stringify(params)}`);
  }
  t.equal((await s.api('POST', '/default_stream_groups/create', admin, { group_name: 'Z', description: '' })).body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('an archived channel leaves the default channel groups and the default channels', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'design' }, { name: 'eng' }, { name: 'lobby' }] });
  const idOf = async (name: string) => (await s.api('GET', '/get_stream_id', admin, { stream: name })).body.stream_id as number;
  const design = await idOf('design');
  const lobby = await idOf('lobby');
  await s.api('POST', '/default_streams', admin, { stream_id: lobby });
  t.equal((await s.api('POST', '/default_stream_groups/create', admin, { group_name: 'Builders', description: '', stream_names: ['eng', 'design'] })).status, 200);
  t.equal((await s.api('POST', '/default_stream_groups/create', admin, { group_name: 'Crafts', description: '', stream_names: ['design'] })).status, 200);
  const both = { event_types: ['default_stream_groups', 'default_streams'], fetch_event_types: ['default_stream_groups', 'default_streams'] };

  const archived = await verifyAction(t, s, member, () => s.api('DELETE', `/streams/${design}`, admin), { register: both });
  t.same(archived.map((e) => e.type), ['default_stream_groups', 'default_stream_groups'], 'one event per group that held it');
  t.same(archived.at(-1)!.default_stream_groups.map((g: { name: string; streams: Array<{ name: string }> }) => [g.name, g.streams.map((c) => c.name)]), [['Builders', ['eng']], ['Crafts', []]]);
  const rows = await s.platform.db.selectFrom('default_stream_groups').select(['name', 'stream_ids']).orderBy('name').execute();
  t.same(rows.map((r) => [r.name, r.stream_ids]), [['Builders', [await idOf('eng')]], ['Crafts', []]], 'the groups no longer hold it');

  const defaults = await verifyAction(t, s, member, () => s.api('DELETE', `/streams/${lobby}`, admin), { register: both });
  t.same(defaults.map((e) => e.type), ['default_streams']);
  t.same(defaults[0]!.default_streams, [], 'no longer a default channel');
});

t.test('default channel groups: the real server\'s order of checks, and groups in code-point order', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'eng' }] });
  // "You must pass..." comes before the group is looked up; the group before the channels named.
  t.equal((await s.api('PATCH', '/default_stream_groups/424242', admin, {})).body.msg, 'You must pass "new_description" or "new_group_name".');
  t.equal((await s.api('PATCH', '/default_stream_groups/424242/streams', admin, { op: 'add', stream_names: ['nowhere'] })).body.msg,
    "Default channel group with id '424242' does not exist.");
  t.equal((await s.api('POST', '/default_stream_groups/create', admin, { group_name: 'a\u0000b', description: '', stream_names: [] })).body.msg,
    'group_name contains NULL (0x00) characters.', 'refused with the parameter, before the group name check');
  for (const name of ['beta', 'Zeta', 'alpha']) {
    t.equal((await s.api('POST', '/default_stream_groups/create', admin, { group_name: name, description: '', stream_names: ['eng'] })).status, 200);
  }
  const state = (await s.api('POST', '/register', admin, register)).body;
  t.same(state.realm_default_stream_groups.map((g: { name: string }) => g.name), ['Zeta', 'alpha', 'beta'], 'sorted as Python sorts strings');
  const id = state.realm_default_stream_groups[0].id as number;
  const only = await verifyAction(t, s, admin, () => s.api('PATCH', `/default_stream_groups/${id}`, admin, { new_description: 'Just this' }), { register });
  t.equal(only.length, 1);
  t.match(only[0]!.default_stream_groups[0], { id, name: 'Zeta', description: 'Just this' });
});

t.test('default channels: the administrator check comes before the parameters (require_realm_admin)', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  for (const method of ['POST', 'DELETE'] as const) {
    t.same((await s.api(method, '/default_streams', member, {})).body,
      { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' }, method);
  }
  t.equal((await s.api('POST', '/default_streams', s.owner, {})).body.code, 'REQUEST_VARIABLE_MISSING');
});
