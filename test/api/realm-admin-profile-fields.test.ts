import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

const register = { event_types: ['custom_profile_fields', 'realm_user'], fetch_event_types: ['custom_profile_fields', 'realm_user'] };

t.test('custom profile fields: create, edit and delete each send the whole list', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');

  let phone = 0;
  const created = await verifyAction(t, s, member, async () => {
    phone = (await s.api('POST', '/realm/profile_fields', admin, { name: 'Phone', field_type: 1, hint: 'Work phone' })).body.id;
  }, { register });
  t.same(created, [{ type: 'custom_profile_fields', id: created[0]?.id, fields: [
    { id: phone, type: 1, order: phone, name: 'Phone', hint: 'Work phone', field_data: '', display_in_profile_summary: false, required: false },
  ] }], 'creating a field sends custom_profile_fields');
  let team = 0;
  await verifyAction(t, s, member, async () => {
    team = (await s.api('POST', '/realm/profile_fields', admin, { name: 'Team', field_type: 1 })).body.id;
  }, { register });

  const edited = await verifyAction(t, s, member, () => s.api('PATCH', `/realm/profile_fields/${phone}`, admin, {
    name: 'Telephone', hint: 'Any phone', display_in_profile_summary: true,
  }), { register });
  t.match(edited, [{ type: 'custom_profile_fields', fields: [{ id: phone, name: 'Telephone', hint: 'Any phone', display_in_profile_summary: true }, { id: team, name: 'Team' }] }]);
  const partial = await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { hint: 'Mobile' });
  t.equal(partial.status, 200);
  t.match((await s.api('GET', '/realm/profile_fields', member)).body.custom_fields[0], { id: phone, name: 'Telephone', hint: 'Mobile' }, 'what is not sent is kept');

  // Values for a field go with it.
  await s.api('PATCH', '/users/me/profile_data', member, { data: [{ id: phone, value: '555' }, { id: team, value: 'Blue' }] });
  const deleted = await verifyAction(t, s, admin, () => s.api('DELETE', `/realm/profile_fields/${phone}`, admin), { register });
  t.match(deleted, [{ type: 'custom_profile_fields', fields: [{ id: team }] }]);
  t.equal(deleted[0]!.fields.length, 1);
  const reg = (await s.api('POST', '/register', admin, register)).body;
  const row = reg.realm_users.find((u: { user_id: number }) => u.user_id === member.id);
  t.same(row.profile_data, { [team]: { value: 'Blue', rendered_value: '<p>Blue</p>' } }, 'only the remaining field keeps its value');

  // A new field's order is its id (as on the real server): after every field there is, deletions or not.
  const third = (await s.api('POST', '/realm/profile_fields', admin, { name: 'Office', field_type: 1 })).body.id;
  const orders = (await s.api('GET', '/realm/profile_fields', member)).body.custom_fields.map((f: { id: number; order: number }) => [f.id, f.order]);
  t.same(orders, [[team, team], [third, third]]);
});

t.test('custom profile fields: permissions and errors', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const a = (await s.api('POST', '/realm/profile_fields', admin, { name: 'A', field_type: 1 })).body.id;
  const b = (await s.api('POST', '/realm/profile_fields', admin, { name: 'B', field_type: 1 })).body.id;
  for (const [method, path, params] of [['PATCH', `/realm/profile_fields/${a}`, { name: 'X' }], ['DELETE', `/realm/profile_fields/${a}`, {}]] as const) {
    const refused = await s.api(method, path, member, params);
    t.same(refused.body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  }
  const expectError = async (method: string, path: string, params: Record<string, unknown>, msg: string) => {
    const r = await s.api(method, path, admin, params);
    t.equal(r.status, 400, `${method} ${path}`);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };
  await expectError('PATCH', '/realm/profile_fields/99999', { name: 'Y' }, 'Field id 99999 not found.');
  await expectError('DELETE', '/realm/profile_fields/99999', {}, 'Field id 99999 not found.');
  await expectError('PATCH', `/realm/profile_fields/${a}`, { name: '  ' }, 'Label cannot be blank.');
  await expectError('PATCH', `/realm/profile_fields/${a}`, { name: 'B' }, 'A field with that label already exists.');
  await expectError('PATCH', `/realm/profile_fields/${a}`, { hint: 'h'.repeat(81) }, 'hint is too long (limit: 80 characters)');
  const c = (await s.api('POST', '/realm/profile_fields', admin, { name: 'C', field_type: 1 })).body.id;
  for (const id of [a, b]) t.equal((await s.api('PATCH', `/realm/profile_fields/${id}`, admin, { display_in_profile_summary: true })).status, 200);
  await expectError('PATCH', `/realm/profile_fields/${c}`, { display_in_profile_summary: true }, 'Only 2 custom profile fields can be displayed in the profile summary.');
  t.equal((await s.api('PATCH', `/realm/profile_fields/${a}`, admin, { name: 'a' })).status, 200, 'a field may change its own label\'s case');
  await expectError('DELETE', '/users/me/profile_data', { data: [99999] }, 'Field id 99999 not found.');
  t.equal((await s.api('DELETE', '/users/me/profile_data', member, {})).body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('DELETE /users/me/profile_data clears the values, as realm_user events', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const a = (await s.api('POST', '/realm/profile_fields', admin, { name: 'A', field_type: 1 })).body.id;
  const b = (await s.api('POST', '/realm/profile_fields', admin, { name: 'B', field_type: 2 })).body.id;
  await s.api('PATCH', '/users/me/profile_data', member, { data: [{ id: a, value: 'one' }, { id: b, value: '**two**' }] });
  const cleared = await verifyAction(t, s, admin, () => s.api('DELETE', '/users/me/profile_data', member, { data: [b] }), { register });
  t.match(cleared, [{ type: 'realm_user', op: 'update', person: { user_id: member.id, custom_profile_field: { id: b, value: null } } }]);
  const user = (await s.api('GET', `/users/${member.id}`, admin, { include_custom_profile_fields: true })).body.user;
  t.same(Object.keys(user.profile_data), [String(a)]);

  await s.api('DELETE', `/realm/profile_fields/${a}`, admin);
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical read tables after rebuild');
});

t.test('custom profile fields: required is stored, listed, changed and sent in events', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');

  let team = 0;
  const created = await verifyAction(t, s, member, async () => {
    team = (await s.api('POST', '/realm/profile_fields', admin, { name: 'Team', field_type: 1, required: true })).body.id;
  }, { register });
  t.match(created, [{ type: 'custom_profile_fields', fields: [{ id: team, required: true }] }], 'created required');
  const listed = async () => (await s.api('GET', '/realm/profile_fields', member)).body.custom_fields.map((f: { id: number; required: boolean }) => [f.id, f.required]);
  t.same(await listed(), [[team, true]]);

  const phone = (await s.api('POST', '/realm/profile_fields', admin, { name: 'Phone', field_type: 1 })).body.id;
  t.same(await listed(), [[team, true], [phone, false]], 'optional unless asked');
  const edited = await verifyAction(t, s, member, () => s.api('PATCH', `/realm/profile_fields/${team}`, admin, { required: false }), { register });
  t.match(edited, [{ type: 'custom_profile_fields', fields: [{ id: team, required: false }, { id: phone, required: false }] }]);
  await verifyAction(t, s, member, () => s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { required: true }), { register });
  t.equal((await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { hint: 'Work' })).status, 200);
  t.same(await listed(), [[team, false], [phone, true]], 'an edit that does not name it keeps it');
  t.equal((await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { required: 'maybe' })).status, 400);
  const reordered = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/profile_fields', admin, { order: [phone, team] }), { register });
  t.match(reordered, [{ type: 'custom_profile_fields', fields: [{ id: phone, required: true }, { id: team, required: false }] }], 'reordering keeps it');
  const state = (await s.api('POST', '/register', member, register)).body;
  t.same(state.custom_profile_fields.map((f: { id: number; required: boolean }) => [f.id, f.required]), [[phone, true], [team, false]]);

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical read tables after rebuild');
});
