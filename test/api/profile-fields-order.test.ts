import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('PATCH /realm/profile_fields reorders the fields', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const ids: number[] = [];
  for (const name of ['Phone', 'Team', 'Birthday']) {
    const res = await s.api('POST', '/realm/profile_fields', admin, { name, field_type: 1 });
    t.equal(res.status, 200, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  const [phone, team, birthday] = ids as [number, number, number];
  const register = { event_types: ['custom_profile_fields'], fetch_event_types: ['custom_profile_fields'] };

  const events = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/profile_fields', admin, { order: [birthday, phone, team] }), { register });
  t.equal(events.length, 1);
  t.same(events[0]!.fields.map((f: any) => [f.id, f.order]), [[birthday, 0], [phone, 1], [team, 2]], 'every field, in the new order');
  t.same(events[0]!.fields[0], { id: birthday, type: 1, order: 0, name: 'Birthday', hint: '', field_data: '', display_in_profile_summary: false, required: false });
  const listed = await s.api('GET', '/realm/profile_fields', member);
  t.same(listed.body.custom_fields.map((f: any) => f.id), [birthday, phone, team]);

  t.same((await s.api('PATCH', '/realm/profile_fields', member, { order: [phone, team, birthday] })).body,
    { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  const missing = await s.api('PATCH', '/realm/profile_fields', admin, { order: [phone, team] });
  t.same(missing.body, { result: 'error', msg: 'Invalid order mapping.', code: 'BAD_REQUEST' }, 'every field must be listed');
  t.equal((await s.api('PATCH', '/realm/profile_fields', admin, {})).body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal((await s.api('PATCH', '/realm/profile_fields', admin, { order: '[1,"x"]' })).status, 400);
  t.equal((await s.api('PATCH', '/realm/profile_fields', admin, { order: [team, 999999, phone, birthday] })).status, 200, 'ids of no field are ignored');
  t.same((await s.api('GET', '/realm/profile_fields', member)).body.custom_fields.map((f: any) => [f.id, f.order]), [[team, 0], [phone, 2], [birthday, 3]]);
  t.same((await s.api('GET', '/realm/profile_fields', member)).body.custom_fields.map((f: any) => f.id),
    (await s.api('POST', '/register', member, register)).body.custom_profile_fields.map((f: any) => f.id), 'register agrees');
});
