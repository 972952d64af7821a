import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

// The read tables of drafts, linkifiers, playgrounds, user groups, push devices and attachments
// are pure folds of the log: a rebuild gives identical rows.
t.test('rebuild reproduces the read tables of these areas', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'replay-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');

  const drafts = await s.api('POST', '/drafts', alice, { drafts: [{ type: '', to: [], topic: '', content: 'a' }, { type: 'private', to: [admin.id], topic: '', content: 'b' }] });
  await s.api('PATCH', `/drafts/${drafts.body.ids[0]}`, alice, { draft: { type: '', to: [], topic: '', content: 'a2' } });
  await s.api('DELETE', `/drafts/${drafts.body.ids[1]}`, alice);
  const l1 = (await s.api('POST', '/realm/filters', admin, { pattern: 'A(?P<n>\\d+)', url_template: 'https://a.com/{n}' })).body.id;
  const l2 = (await s.api('POST', '/realm/filters', admin, { pattern: 'B(?P<n>\\d+)', url_template: 'https://b.com/{n}' })).body.id;
  await s.api('PATCH', '/realm/linkifiers', admin, { ordered_linkifier_ids: [l2, l1] });
  await s.api('PATCH', `/realm/filters/${l1}`, admin, { pattern: 'C(?P<n>\\d+)', url_template: 'https://c.com/{n}' });
  await s.api('POST', '/realm/playgrounds', admin, { name: 'P', highlighter_language: 'Python', url_template: 'https://p.com/{code}' });
  const g1 = (await s.api('POST', '/user_groups/create', alice, { name: 'g1', description: '', members: [alice.id] })).body.group_id;
  const g2 = (await s.api('POST', '/user_groups/create', admin, { name: 'g2', description: 'x', members: [] })).body.group_id;
  await s.api('POST', `/user_groups/${g2}/subgroups`, admin, { add: [g1] });
  await s.api('POST', `/user_groups/${g1}/members`, admin, { add: [admin.id] });
  await s.api('PATCH', `/users/${alice.id}`, admin, { role: Role.MODERATOR });
  await s.api('POST', '/users/me/push_device_token', alice, { token: 'abcdef', appid: 'org.example' });
  const reg = await s.platform.db.selectFrom('drafts').select('id').execute();
  t.equal(reg.length, 1);

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  for (const table of ['drafts', 'linkifiers', 'playgrounds', 'user_groups', 'user_group_members', 'user_group_subgroups', 'push_devices']) {
    t.ok(before.find((x) => x.table === table)!.rows > 0, `the workload wrote ${table}`);
  }
  const head = await s.platform.store.head();
  t.equal(await s.platform.projections.rebuild(), head.position);
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
});
