import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('realm_linkifiers events', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const register = { event_types: ['realm_linkifiers'], fetch_event_types: ['realm_linkifiers'], client_capabilities: { linkifier_url_template: true } };

  let first = 0;
  const added = await verifyAction(t, s, member, async () => {
    first = (await s.api('POST', '/realm/filters', admin, { pattern: '#(?P<id>\\d+)', url_template: 'https://x.com/{id}' })).body.id;
  }, { register });
  t.match(added, [{ type: 'realm_linkifiers', realm_linkifiers: [{ id: first, pattern: '#(?P<id>\\d+)', url_template: 'https://x.com/{id}' }] }]);

  let second = 0;
  await verifyAction(t, s, member, async () => {
    second = (await s.api('POST', '/realm/filters', admin, { pattern: 'B(?P<n>\\d+)', url_template: 'https://b.com/{n}' })).body.id;
  }, { register });
  const reordered = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [second, first] }), { register });
  t.same(reordered[0].realm_linkifiers.map((l: any) => l.id), [second, first], 'the event lists them in the new order');
  await verifyAction(t, s, member, () => s.api('PATCH', `/realm/filters/${first}`, admin, { pattern: 'A(?P<id>\\d+)', url_template: 'https://a.com/{id}' }), { register });

  // Two changes before the queue is read: each event carries the list as of that change.
  const both = await verifyAction(t, s, member, async () => {
    await s.api('DELETE', `/realm/filters/${second}`, admin);
    await s.api('DELETE', `/realm/filters/${first}`, admin);
  }, { register });
  t.same(both.map((e) => e.realm_linkifiers.map((l: any) => l.id)), [[first], []]);

  // Without the capability: no linkifiers in the state, and no events.
  const old = { event_types: ['realm_linkifiers'], fetch_event_types: ['realm_linkifiers', 'realm_filters'] };
  const none = await verifyAction(t, s, member, () => s.api('POST', '/realm/filters', admin, { pattern: 'C(?P<n>\\d+)', url_template: 'https://c.com/{n}' }), { register: old });
  t.same(none, []);
  const reg = await s.api('POST', '/register', member, old);
  t.same([reg.body.realm_linkifiers, reg.body.realm_filters], [[], []]);
});

t.test('realm_playgrounds events', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const register = { event_types: ['realm_playgrounds'], fetch_event_types: ['realm_playgrounds'] };
  let id = 0;
  const added = await verifyAction(t, s, admin, async () => {
    id = (await s.api('POST', '/realm/playgrounds', admin, { name: 'Python', highlighter_language: 'Python', url_template: 'https://py.example.com?code={code}' })).body.id;
  }, { register });
  t.match(added, [{ type: 'realm_playgrounds', realm_playgrounds: [{ id, name: 'Python', pygments_language: 'Python', url_template: 'https://py.example.com?code={code}' }] }]);
  const removed = await verifyAction(t, s, admin, () => s.api('DELETE', `/realm/playgrounds/${id}`, admin), { register });
  t.match(removed, [{ type: 'realm_playgrounds', realm_playgrounds: [] }]);
});
