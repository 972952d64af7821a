import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

t.test('code playgrounds', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const add = (params: Record<string, unknown>, as = admin) => s.api('POST', '/realm/playgrounds', as, params);
  const good = { name: 'Python playground', highlighter_language: 'Python', url_template: 'https://python.example.com?code={code}' };

  const created = await add(good);
  t.equal(created.status, 200);
  t.type(created.body.id, 'number');
  const legacy = await add({ name: 'Rust', pygments_language: 'Rust', url_template: 'https://play.rust-lang.org/?code={code}' });
  t.equal(legacy.status, 200, 'the real server parameter name works too');
  const state = await s.api('POST', '/register', member, { fetch_event_types: ['realm_playgrounds'] });
  t.same(state.body.realm_playgrounds, [
    { id: created.body.id, name: 'Python playground', pygments_language: 'Python', highlighter_language: 'Python', url_template: 'https://python.example.com?code={code}' },
    { id: legacy.body.id, name: 'Rust', pygments_language: 'Rust', highlighter_language: 'Rust', url_template: 'https://play.rust-lang.org/?code={code}' },
  ]);

  t.equal((await add(good, member)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await add(good)).body.msg, 'Realm playground with this Realm, Pygments language and Name already exists.');
  const expectMsg = async (params: Record<string, unknown>, msg: string) => {
    const r = await add({ ...good, name: `n${Math.random()}`, ...params });
    t.equal(r.status, 400);
    t.equal(r.body.msg, msg, JSON.stringify(params));
  };
  await expectMsg({ url_template: 'https://x.com/{code' }, 'Invalid URL template.');
  // A template without `code` is "missing" it (the real model's clean), not one with other variables.
  await expectMsg({ url_template: 'https://x.com/?q={query}' }, 'Missing the required variable "code" in the URL template');
  await expectMsg({ url_template: 'https://x.com/{code}/{code2}' }, '"code" should be the only variable present in the URL template');
  await expectMsg({ url_template: 'https://x.com/' }, 'Missing the required variable "code" in the URL template');
  await expectMsg({ name: '' }, 'This field cannot be blank.');
  await expectMsg({ highlighter_language: 'py<thon>' }, 'Invalid characters in pygments language');
  t.equal((await s.api('POST', '/realm/playgrounds', admin, { name: 'x', url_template: 'https://x.com/{code}' })).body.code, 'REQUEST_VARIABLE_MISSING');

  t.equal((await s.api('DELETE', `/realm/playgrounds/${created.body.id}`, member)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await s.api('DELETE', `/realm/playgrounds/${created.body.id}`, admin)).status, 200);
  const gone = await s.api('DELETE', `/realm/playgrounds/${created.body.id}`, admin);
  t.same(gone.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid playground' });
});

t.test('playground validation follows the real server (test_realm_playgrounds.py, RealmPlayground)', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const add = (params: Record<string, unknown>) => s.api('POST', '/realm/playgrounds', admin, params);
  const base = { name: 'Checked', pygments_language: 'Python', url_template: 'https://template.com{code}' };

  t.same((await add({ ...base, pygments_language: 'a$b$c' })).body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid characters in pygments language' });
  t.equal((await add({ ...base, pygments_language: 'x'.repeat(41) })).body.msg, 'pygments_language is too long (limit: 40 characters)');
  t.equal((await add({ ...base, url_template: 'https://template.com{?test,code}' })).body.msg, '"code" should be the only variable present in the URL template');
  t.equal((await add({ ...base, url_template: 'https://template.com?test={test' })).body.msg, 'Invalid URL template.');
  t.equal((await add({ ...base, url_template: 'javascript:alert({code})' })).body.msg, 'Invalid URL template.', 'a script scheme is refused (our departure)');
  const missing = await add({ ...base, url_template: 'https://template.com{?test}' });
  t.same(missing.body, {
    result: 'error', code: 'BAD_REQUEST', msg: 'Missing the required variable "code" in the URL template',
    errors: { __all__: ['Missing the required variable "code" in the URL template'] },
  });
  // Every failure is listed, fields (template, name, language) before the model's own check.
  const blank = await add({ name: '  ', pygments_language: ' ', url_template: 'https://x.com/{q}' });
  t.same(blank.body.errors, {
    name: ['This field cannot be blank.'],
    pygments_language: ['This field cannot be blank.'],
    __all__: ['Missing the required variable "code" in the URL template'],
  });
  t.equal(blank.body.msg, 'This field cannot be blank.');

  const created = await add({ name: ' Spaced ', pygments_language: ' C++, C ', url_template: ' https://cpp.example.com/{code} ' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const state = await s.api('POST', '/register', admin, { fetch_event_types: ['realm_playgrounds'] });
  t.match(state.body.realm_playgrounds, [{ id: created.body.id, name: 'Spaced', pygments_language: 'C++, C', url_template: 'https://cpp.example.com/{code}' }],
    'stored stripped, as the real server strips all three');
  const again = await add({ name: 'Spaced', pygments_language: 'C++, C', url_template: 'https://other.example.com/{code}' });
  t.same(again.body.errors, { __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] });
});
