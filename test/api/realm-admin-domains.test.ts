import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

const register = { event_types: ['realm_domains', 'realm'], fetch_event_types: ['realm_domains', 'realm'] };

t.test('realm domains: owners add, change and remove them; everyone sees them', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  t.same((await s.api('GET', '/realm/domains', member)).body, { result: 'success', msg: '', domains: [] });

  let answer: any;
  const added = await verifyAction(t, s, member, async () => {
    answer = (await s.api('POST', '/realm/domains', s.owner, { domain: ' Example.ORG ', allow_subdomains: false })).body;
  }, { register });
  t.match(answer, { result: 'success', new_domain: [Number, 'example.org'] });
  t.same(added.map(({ id: _id, ...e }) => e), [{ type: 'realm_domains', op: 'add', realm_domain: { domain: 'example.org', allow_subdomains: false } }]);
  await verifyAction(t, s, member, () => s.api('POST', '/realm/domains', s.owner, { domain: 'zulip.test', allow_subdomains: true }), { register });
  const changed = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/domains/example.org', s.owner, { allow_subdomains: true }), { register });
  t.match(changed, [{ type: 'realm_domains', op: 'change', realm_domain: { domain: 'example.org', allow_subdomains: true } }]);
  t.same((await s.api('GET', '/realm/domains', member)).body.domains, [
    { domain: 'example.org', allow_subdomains: true }, { domain: 'zulip.test', allow_subdomains: true },
  ]);

  // Restrict to the domains, then remove them: the last removal lifts the restriction.
  await s.api('PATCH', '/realm', s.owner, { emails_restricted_to_domains: true });
  await verifyAction(t, s, member, () => s.api('DELETE', '/realm/domains/zulip.test', s.owner), { register });
  const last = await verifyAction(t, s, member, () => s.api('DELETE', '/realm/domains/example.org', s.owner), { register });
  t.same(last.map(({ id: _id, ...e }) => e), [
    { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false },
    { type: 'realm_domains', op: 'remove', domain: 'example.org' },
  ]);

  await s.api('POST', '/realm/domains', s.owner, { domain: 'kept.example', allow_subdomains: false });
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical read tables after rebuild');
  t.same((await s.api('POST', '/register', member, register)).body.realm_domains, [{ domain: 'kept.example', allow_subdomains: false }]);

  // Administrators are not owners.
  for (const [method, path, params] of [
    ['POST', '/realm/domains', { domain: 'admin.example', allow_subdomains: false }],
    ['PATCH', '/realm/domains/kept.example', { allow_subdomains: true }],
    ['DELETE', '/realm/domains/kept.example', {}],
  ] as const) {
    for (const who of [admin, member]) {
      t.same((await s.api(method, path, who, params)).body, { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' }, `${method} ${path}`);
    }
  }
});

t.test('realm domains: errors', async (t) => {
  const s = await startTestServer(t);
  await s.api('POST', '/realm/domains', s.owner, { domain: 'taken.example', allow_subdomains: false });
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['POST', '/realm/domains', { domain: '', allow_subdomains: false }, "Invalid domain: Domain can't be empty."],
    ['POST', '/realm/domains', { domain: 'localhost', allow_subdomains: false }, 'Invalid domain: Domain must have at least one dot (.)'],
    ['POST', '/realm/domains', { domain: '.example.com', allow_subdomains: false }, 'Invalid domain: Domain cannot start or end with a dot (.)'],
    ['POST', '/realm/domains', { domain: 'a..b', allow_subdomains: false }, "Invalid domain: Consecutive '.' are not allowed."],
    ['POST', '/realm/domains', { domain: '-a.b', allow_subdomains: false }, "Invalid domain: Subdomains cannot start or end with a '-'."],
    ['POST', '/realm/domains', { domain: 'a_b.c', allow_subdomains: false }, "Invalid domain: Domain can only have letters, numbers, '.' and '-'s."],
    ['POST', '/realm/domains', { domain: 'Taken.example', allow_subdomains: true }, 'The domain taken.example is already a part of your organization.'],
    ['PATCH', '/realm/domains/missing.example', { allow_subdomains: true }, 'No entry found for domain missing.example.'],
    ['DELETE', '/realm/domains/missing.example', {}, 'No entry found for domain missing.example.'],
    ['POST', '/realm/domains', { domain: 'x.example', allow_subdomains: 'often' }, 'Argument "allow_subdomains" is not valid JSON.'],
  ];
  for (const [method, path, params, msg] of cases) {
    t.same((await s.api(method, path, s.owner, params)).body, { result: 'error', msg, code: 'BAD_REQUEST' }, `${method} ${JSON.stringify(params)}`);
  }
  t.equal((await s.api('POST', '/realm/domains', s.owner, { domain: 'y.example' })).body.code, 'REQUEST_VARIABLE_MISSING');
});

t.test('invitations respect the email domain restriction', async (t) => {
  const s = await startTestServer(t);
  await s.api('POST', '/realm/domains', s.owner, { domain: 'corp.example', allow_subdomains: true });
  await s.api('POST', '/realm/domains', s.owner, { domain: 'exact.example', allow_subdomains: false });
  const invite = (emails: string) => s.api('POST', '/invites', s.owner, { invitee_emails: emails, stream_ids: [] });
  t.equal((await invite('a@elsewhere.example')).status, 200, 'no restriction yet');
  await s.api('PATCH', '/realm', s.owner, { emails_restricted_to_domains: true });
  const refused = await invite('b@elsewhere.example, c@corp.example, d@sub.exact.example, e+tag@corp.example');
  t.match(refused.body, {
    result: 'error', code: 'INVITATION_FAILED', msg: "Some emails did not validate, so we didn't send any invitations.",
    errors: [
      ['b@elsewhere.example', 'Outside your domain.', false],
      ['d@sub.exact.example', 'Outside your domain.', false],
      ['e+tag@corp.example', 'Email addresses containing + are not allowed.', false],
    ],
    sent_invitations: false,
  });
  t.equal((await invite('f@corp.example, g@team.corp.example, h@exact.example')).status, 200, 'allowed domains and subdomains are invited');
});

t.test('realm domains: listed in the order they were added; a PATCH is announced even when it changes nothing; the owner check comes first', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('POST', '/realm/domains', s.owner, { domain: 'zulip.com', allow_subdomains: false });
  await s.api('POST', '/realm/domains', s.owner, { domain: 'acme.com', allow_subdomains: true });
  const listed = [{ domain: 'zulip.com', allow_subdomains: false }, { domain: 'acme.com', allow_subdomains: true }];
  t.same((await s.api('GET', '/realm/domains', member)).body.domains, listed);
  t.same((await s.api('POST', '/register', member, register)).body.realm_domains, listed);

  const same = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/domains/zulip.com', s.owner, { allow_subdomains: false }), { register });
  t.match(same, [{ type: 'realm_domains', op: 'change', realm_domain: { domain: 'zulip.com', allow_subdomains: false } }]);

  // As the real server's role check, before any parameter is read.
  for (const who of [admin, member]) {
    for (const [method, path] of [['POST', '/realm/domains'], ['PATCH', '/realm/domains/zulip.com'], ['DELETE', '/realm/domains/zulip.com']] as const) {
      t.match(await s.api(method, path, who, {}), { status: 400, body: { result: 'error', msg: 'Must be an organization owner' } }, `${method} ${path}`);
    }
  }
});
