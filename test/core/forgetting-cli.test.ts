import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { testConfig } from '../helpers/config.js';
import { createPlatform } from '../../src/platform.js';
import { createUser } from '../../src/services/users.js';
import { eraseUserCommand, legalHoldCommand } from '../../src/cli/forgetting-commands.js';
import { Role } from '../../src/domain/roles.js';
import { tablesContaining } from '../helpers/marker-search.js';

t.test('CLI: legal-hold add, list and remove; erase-user refused while held, then erases', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'forget-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = { ...(await testConfig()), dataDir: path.join(dir, 'data'), forgettingIntervalSeconds: 0 };
  const server = await buildServer(config, { projections: allProjections });
  const name = `marker${randomUUID().replace(/-/g, '')}`;
  const meta = { actorId: null, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() };
  const { user_id } = await createUser(server.platform, meta, { email: `${name}@example.com`, full_name: name, role: Role.MEMBER });
  await server.close();

  const lines: string[] = [];
  const out = (line: string) => lines.push(line);
  const holds = await legalHoldCommand(config, allProjections, out, { action: 'add', scope: 'user', id: user_id, reason: 'litigation' });
  t.same(holds.map((h) => [h.scope, h.subject_id, h.reason]), [['user', user_id, 'litigation']]);
  t.same((await legalHoldCommand(config, allProjections, out, { action: 'list' })).length, 1);
  t.match(lines.at(-1), new RegExp(`^user ${user_id}\\tsince .*\\tlitigation$`));
  await t.rejects(eraseUserCommand(config, allProjections, out, { email: `${name}@example.com`, messages: 'shred' }), /legal hold/, 'a held person is not erased');
  await t.rejects(legalHoldCommand(config, allProjections, out, { action: 'add', scope: 'channel', id: 999_999 }), /Invalid channel ID/);
  t.same(await legalHoldCommand(config, allProjections, out, { action: 'remove', scope: 'user', id: user_id }), []);
  await t.rejects(eraseUserCommand(config, allProjections, out, { email: 'nobody@example.com', messages: 'keep' }), /no user/);
  const result = await eraseUserCommand(config, allProjections, out, { email: `${name}@example.com`, messages: 'shred', reason: 'asked' });
  t.equal(result.user_id, user_id);
  t.match(lines.at(-1), `erased user ${user_id}`);

  const p = await createPlatform(config, { projections: allProjections, startWorkers: false });
  try {
    const row = await p.db.selectFrom('users').selectAll().where('id', '=', user_id).executeTakeFirstOrThrow();
    t.equal(row.full_name, `Deleted User ${user_id}`);
    t.equal(row.is_active, false);
    t.same(await tablesContaining(p.db, name), [], 'the name and address are found in no table');
    const erased = await p.db.selectFrom('events').select(['metadata', 'data']).where('type', '=', 'UserErased').executeTakeFirstOrThrow();
    t.equal((erased.metadata as { client: string }).client, 'cli');
  } finally {
    await p.close();
  }
});
