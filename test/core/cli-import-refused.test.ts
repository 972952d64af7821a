import t from 'tap';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testConfig } from '../helpers/config.js';
import { allProjections } from '../../projections/index.js';
import { createUserCommand, exportCommand, importCommand } from '../../src/cli/commands.js';
import { createPlatform } from '../../src/platform.js';

async function headOf(config: Awaited<ReturnType<typeof testConfig>>) {
  const p = await createPlatform(config, { projections: allProjections, startWorkers: false });
  try {
    return await p.store.head();
  } finally {
    await p.close();
  }
}

t.test('a refused import leaves the database as it was', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cli-tamper-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const source = { ...(await testConfig()), dataDir: path.join(dir, 'source') };
  const out = () => undefined;
  await createUserCommand(source, allProjections, out, { email: 'eve@example.com', fullName: 'Eve', role: 400 });
  const file = path.join(dir, 'log.jsonl');
  await exportCommand(source, allProjections, out, file);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  // Names are sealed in the log now; the forgery promotes Eve (a guest) to owner instead.
  const at = lines.findIndex((line) => line.includes('"UserCreated"') && line.includes('"role":400'));
  t.ok(at >= 0);
  const forged = path.join(dir, 'forged.jsonl');
  writeFileSync(forged, `${[...lines.slice(0, at), lines[at]!.replace('"role":400', '"role":100'), ...lines.slice(at + 1)].join('\n')}\n`);

  const target = { ...(await testConfig()), dataDir: path.join(dir, 'target') };
  await t.rejects(importCommand(target, allProjections, out, forged), /does not verify/);
  t.equal((await headOf(target)).position, 0, 'no forged event stays behind');
  t.equal(await importCommand(target, allProjections, out, file), lines.length, 'the database is still empty: the genuine export imports');
});
