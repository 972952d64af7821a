import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel } from '../helpers/channels-fixture.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('PATCH /users/me/subscriptions/{stream_id}: one property, as subscriptions/properties', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const id = await createChannel(s, s.owner, 'legacy', [member]);
  const register = { event_types: ['subscription'], fetch_event_types: ['subscription'] };
  const sub = async () =>
    (await s.api('POST', '/register', member, { fetch_event_types: ['subscription'] })).body.subscriptions.find((x: any) => x.stream_id === id);

  for (const [property, value] of [['color', '#abcdef'], ['is_muted', true], ['pin_to_top', true], ['desktop_notifications', false]] as const) {
    const events = await verifyAction(t, s, member, () => s.api('PATCH', `/users/me/subscriptions/${id}`, member, { property, value }), { register });
    // is_muted also travels as in_home_view, as on the bulk route.
    t.ok(events.every((e: any) => e.type === 'subscription' && e.op === 'update' && e.stream_id === id), property);
    t.ok(events.some((e: any) => e.property === property && e.value === value), property);
  }
  const now = await sub();
  t.same([now.color, now.is_muted, now.pin_to_top, now.desktop_notifications], ['#abcdef', true, true, false]);

  const error = async (who: typeof member, path: string, params: Record<string, unknown>, msg: string) => {
    const r = await s.api('PATCH', path, who, params);
    t.equal(r.status, 400, `${path} ${JSON.stringify(params)}`);
    t.equal(r.body.msg, msg);
  };
  // The same errors as the bulk route gives for the same change.
  const bulk = async (who: typeof member, stream_id: number, property: string, value: unknown) =>
    (await s.api('POST', '/users/me/subscriptions/properties', who, { subscription_data: [{ stream_id, property, value }] })).body.msg;
  await error(member, `/users/me/subscriptions/${id}`, { property: 'colour', value: '#000000' }, await bulk(member, id, 'colour', '#000000'));
  await error(member, `/users/me/subscriptions/${id}`, { property: 'color', value: 'red' }, await bulk(member, id, 'color', 'red'));
  await error(outsider, `/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: true }, await bulk(outsider, id, 'pin_to_top', true));
  await error(member, '/users/me/subscriptions/999999', { property: 'pin_to_top', value: true }, await bulk(member, 999999, 'pin_to_top', true));
  t.equal((await s.api('PATCH', `/users/me/subscriptions/${id}`, member, { property: 'pin_to_top' })).body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal((await s.api('PATCH', `/users/me/subscriptions/${id}`, member, { property: 'pin_to_top', value: [1] })).status, 400);
  t.equal((await s.api('PATCH', `/users/me/subscriptions/${id}`, null, { property: 'pin_to_top', value: true })).status, 401);
  t.same((await sub()).color, '#abcdef', 'failed requests changed nothing');
});
