import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { templateVariables } from '../../src/domain/linkifiers/url-template.js';
import { verifyAction } from '../helpers/verify-action.js';

t.test('RFC 6570 template variables', async (t) => {
  t.same(templateVariables('https://x.com/{id}'), ['id']);
  t.same(templateVariables('https://x.com/{org}/{repo}/issues/{+path}{?q,lang}{#frag}'), ['org', 'repo', 'path', 'q', 'lang', 'frag']);
  t.same(templateVariables('https://x.com/{id:3}/{list*}'), ['id', 'list']);
  t.same(templateVariables('https://x.com/no-vars'), []);
  for (const bad of ['https://x.com/{id', 'https://x.com/id}', 'https://x.com/{}', 'https://x.com/{a b}', 'https://x.com/{=a}', 'https://x.com/ {a}', 'https://x.com/{id:0}']) {
    t.equal(templateVariables(bad), null, bad);
  }
});

t.test('linkifiers: add, list in order, update, reorder, delete', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');

  t.same((await s.api('GET', '/realm/linkifiers', member)).body, { result: 'success', msg: '', linkifiers: [] });
  const a = await s.api('POST', '/realm/filters', admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issue/{id}' });
  t.equal(a.status, 200, JSON.stringify(a.body));
  t.type(a.body.id, 'number');
  const b = await s.api('POST', '/realm/filters', admin, { pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>\\d+)', url_template: 'https://github.com/{org}/{repo}/pull/{id}' });
  t.equal(b.status, 200);
  const list = await s.api('GET', '/realm/linkifiers', member);
  t.same(list.body.linkifiers.map((l: any) => l.id), [a.body.id, b.body.id]);
  t.same(list.body.linkifiers[0], { id: a.body.id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issue/{id}' });

  const reordered = await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [b.body.id, a.body.id] });
  t.equal(reordered.status, 200);
  t.same((await s.api('GET', '/realm/linkifiers', member)).body.linkifiers.map((l: any) => l.id), [b.body.id, a.body.id]);
  t.equal((await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [b.body.id] })).body.msg,
    'The ordered list must enumerate all existing linkifiers exactly once');
  t.equal((await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [b.body.id, b.body.id] })).body.msg,
    'The ordered list must not contain duplicated linkifiers');

  const updated = await s.api('PATCH', `/realm/filters/${a.body.id}`, admin, { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.example.com/{id}' });
  t.equal(updated.status, 200);
  const after = (await s.api('GET', '/realm/linkifiers', member)).body.linkifiers;
  t.same(after[1], { id: a.body.id, pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.example.com/{id}' }, 'update keeps the position');

  // The table the message renderer reads is kept (order column included).
  const rows = await s.platform.db.selectFrom('linkifiers').selectAll().orderBy('order').execute();
  t.same(rows.map((r) => [r.id, r.order, r.realm_id]), [[b.body.id, 0, 1], [a.body.id, 1, 1]]);

  t.equal((await s.api('DELETE', `/realm/filters/${b.body.id}`, admin)).status, 200);
  t.same((await s.api('GET', '/realm/linkifiers', member)).body.linkifiers.map((l: any) => l.id), [a.body.id]);
  for (const [method, path, params] of [
    ['DELETE', `/realm/filters/${b.body.id}`, {}],
    ['PATCH', '/realm/filters/99999', { pattern: 'x', url_template: 'https://x.com' }],
  ] as const) {
    const r = await s.api(method, path, admin, params);
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Linkifier not found.' });
  }
});

t.test('linkifiers: permissions and validation', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const post = (pattern: string, url_template: string, as = admin) => s.api('POST', '/realm/filters', as, { pattern, url_template });

  const denied = await post('#(?P<id>\\d+)', 'https://x.com/{id}', member);
  t.equal(denied.status, 400);
  t.equal(denied.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await s.api('PATCH', '/realm/linkifiers', member, { ordered_linkifier_ids: [] })).body.code, 'UNAUTHORIZED_PRINCIPAL');

  const badRegex = await post('#(?P<id>\\d+', 'https://x.com/{id}');
  t.equal(badRegex.status, 400);
  // The model's clean reports it, so it is a non-field error on the real server.
  t.match(badRegex.body, { code: 'BAD_REQUEST', msg: /^Bad regular expression: /, errors: { __all__: [/^Bad regular expression/] } });
  const badTemplate = await post('#(?P<id>\\d+)', 'https://x.com/{id');
  t.match(badTemplate.body, { msg: 'Invalid URL template.', errors: { url_template: ['Invalid URL template.'] } });
  t.equal((await post('#(?P<id>\\d+)', 'https://x.com/{other}')).body.msg, "Group 'other' in URL template is not present in linkifier pattern.");
  t.equal((await post('#(?P<id>\\d+)-(?P<x>\\d+)', 'https://x.com/{id}')).body.msg, "Group 'x' in linkifier pattern is not present in URL template.");
  t.equal((await post('', 'https://x.com/')).body.msg, 'This field cannot be blank.');
  t.equal((await s.api('POST', '/realm/filters', admin, { pattern: 'x' })).body.code, 'REQUEST_VARIABLE_MISSING');

  t.equal((await post('#(?P<id>\\d+)', 'https://x.com/{id}')).status, 200);
  t.equal((await post('#(?P<id>\\d+)', 'https://y.com/{id}')).body.msg, 'Linkifier with this Pattern and Realm already exists.');
  t.equal((await post('JS-(?<num>\\d+)', 'https://js.example.com/{num}')).status, 200, 'JavaScript named groups are accepted too');
});

t.test('linkifier changes: the administrator check comes before the parameters, as on the real server', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  for (const [method, path] of [['POST', '/realm/filters'], ['PATCH', '/realm/filters/1'], ['DELETE', '/realm/filters/1'], ['PATCH', '/realm/linkifiers']] as const) {
    t.match(await s.api(method, path, member, {}), { status: 400, body: { result: 'error', msg: 'Must be an organization administrator' } }, `${method} ${path}`);
  }
});

t.test('linkifier validation follows the real server (test_realm_linkifiers.py)', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const post = (pattern: string, url_template: string) => s.api('POST', '/realm/filters', admin, { pattern, url_template });

  const blank = await post('', 'https://realm.com/my_realm_filter/{id}');
  t.same(blank.body, {
    result: 'error', code: 'BAD_REQUEST', msg: 'This field cannot be blank.',
    errors: { pattern: ['This field cannot be blank.'], __all__: ["Group 'id' in URL template is not present in linkifier pattern."] },
  }, 'every failure is listed, the field checks first');
  t.equal((await post('(foo', 'https://realm.com/my_realm_filter/{id}')).body.msg, 'Bad regular expression: missing ): (foo');
  t.equal((await post('ZUL-(?P<id>\\d????)', 'https://realm.com/my_realm_filter/{id}')).body.msg, 'Bad regular expression: bad repetition operator: ????');
  // Not a URL, but a valid URL template: the groups are what is wrong.
  t.equal((await post('ZUL-(?P<id>\\d+)', '$fgfg')).body.msg, "Group 'id' in linkifier pattern is not present in URL template.");
  t.equal((await post('ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/')).body.msg, "Group 'id' in linkifier pattern is not present in URL template.");
  t.equal((await post('ZUL-(?P<id>\\d+)-(?P<hello>\\d+)-(?P<world>\\d+)', 'https://realm.com/{hello}')).body.msg,
    "Group 'id' in linkifier pattern is not present in URL template.", 'the alphabetically first missing group');
  // A bad template is reported before a bad pattern (field checks come before the model's clean).
  const both = await post('(foo', 'https://x.com/{id');
  t.same(both.body.errors, { url_template: ['Invalid URL template.'], __all__: ['Bad regular expression: missing ): (foo'] });
  t.equal(both.body.msg, 'Invalid URL template.');

  for (const [pattern, template] of [
    ['ZUL-URL-(?P<id>\\d+)', 'https://example.com/%ba/{id}'],
    ['PC(?P<id>\\d+)', 'https://example.com/%%(foo)s/{id}'],
    ['NOURL(?P<id>\\d+)', '$not_a_url${id}'],
    ['3#123', 'https://example.com'],
    ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/issue/{id}'],
    [' ', 'https://example.com/space'],
    ['L'.repeat(1500), 'https://example.com/long'],
  ]) {
    const r = await post(pattern!, template!);
    t.equal(r.status, 200, `${pattern.slice(0, 40)} ${template}: ${JSON.stringify(r.body)}`);
  }
  // Our one departure: a script-capable scheme is refused, since clients expand templates themselves.
  for (const template of ['javascript:alert({id})', ' JAVASCRIPT:alert({id})', 'vbscript:msgbox({id})', 'data:text/plain,{id}']) {
    const r = await post('SCHEME-(?P<id>\\d+)', template);
    t.same([r.status, r.body.errors], [400, { url_template: ['Invalid URL template.'] }], `${template} refused`);
  }
  t.equal((await post('MAIL-(?P<id>\\d+)', 'mailto:team-{id}@example.com')).status, 200, 'mailto: accepted');
  const taken = await post('3#123', 'https://example.com/other');
  t.same(taken.body.errors, { __all__: ['Linkifier with this Pattern and Realm already exists.'] });
});

t.test('reordering no linkifiers records nothing and sends no event', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const register = { event_types: ['realm_linkifiers'], fetch_event_types: ['realm_linkifiers'], client_capabilities: { linkifier_url_template: true } };
  const events = await verifyAction(t, s, admin, async () => {
    const r = await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [] });
    t.same(r.body, { result: 'success', msg: '' });
  }, { register });
  t.same(events, []);
  t.equal((await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [7] })).body.msg,
    'The ordered list must enumerate all existing linkifiers exactly once');
});
