import t from 'tap';
import { mkdtempSync, rmSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testConfig } from '../helpers/config.js';
import { entryPointArgs, repoRoot } from '../helpers/repo-root.js';
import { allProjections } from '../../projections/index.js';
import { createUserCommand, exportCommand, importCommand, rebuildCommand, verifyCommand } from '../../src/cli/commands.js';
import { acquireDataDirLock } from '../../src/db/data-dir-lock.js';
import { createPlatform } from '../../src/platform.js';
import { tableChecksums } from '../../src/read/checksums.js';

const run = promisify(execFile);

t.test('create-user, verify, rebuild, export and import round trip', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const source = { ...(await testConfig()), dataDir: path.join(dir, 'source') };
  const lines: string[] = [];
  const out = (line: string) => lines.push(line);

  const ann = await createUserCommand(source, allProjections, out, { email: 'ann@example.com', fullName: 'Ann', role: 200 });
  t.equal(ann.apiKey.length, 32);
  const rc = readFileSync(path.join(source.dataDir, 'zuliprc-ann@example.com'), 'utf8');
  t.match(rc, /\[api\]\nemail=ann@example.com\nkey=\w{32}\nsite=http/);
  await createUserCommand(source, allProjections, out, { email: 'bob@example.com', fullName: 'Bob', role: 400, botType: 1 });

  t.equal(await verifyCommand(source, allProjections, out), true);
  const headLine = lines.find((l) => l.startsWith('head hash: '))!;
  const head = headLine.slice('head hash: '.length);
  t.equal(await verifyCommand(source, allProjections, out, head), true, 'verify --head with the current head');

  const report = await rebuildCommand(source, allProjections, out, false);
  t.equal(report.identical, true, 'rebuild reproduces identical checksums');
  t.ok(report.events > 0);

  const file = path.join(dir, 'log.jsonl');
  const exported = await exportCommand(source, allProjections, out, file);
  t.ok(existsSync(file));
  t.equal(readFileSync(file, 'utf8').trim().split('\n').length, exported);

  // A full restore: the source's key-encryption key and the data keys exported beside the log
  // (the organization's welcome messages are sealed; without the keys they would read as shredded).
  const secret = readFileSync(path.join(source.dataDir, 'data-key-secret'), 'utf8');
  const target = { ...(await testConfig()), dataDir: path.join(dir, 'target'), dataKeySecret: secret };
  const imported = await importCommand(target, allProjections, out, file, `${file}.keys`);
  t.equal(imported, exported);
  t.equal(await verifyCommand(target, allProjections, out, head), true, 'the imported log has the same head hash');
  const tables = allProjections.flatMap((p) => p.tables).filter((x) => x !== 'event_queues');
  const sums = async (config: typeof source) => {
    const p = await createPlatform(config, { projections: allProjections, startWorkers: false });
    try {
      return await tableChecksums(p.db, tables);
    } finally {
      await p.close();
    }
  };
  t.same(await sums(target), await sums(source), 'imported read tables equal the source');
  await t.rejects(importCommand(target, allProjections, out, file), /empty log/, 'import refuses a non-empty log');
});

t.test('on the embedded database the CLI says clearly when a server holds it', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cli-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lock = acquireDataDirLock(dir);
  t.teardown(() => lock.release());
  const result = await run(process.execPath, [...entryPointArgs('src/cli/main'), 'verify'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '' },
  }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  t.not(result.code, 0);
  t.match(result.stderr, new RegExp(`in use by process ${process.pid}`));
});
