import t from 'tap';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testConfig } from '../helpers/config.js';
import { testMetadata } from '../helpers/platform.js';
import { allProjections } from '../../projections/index.js';
import { exportCommand, generateLogKeyCommand, importCommand, verifyCommand } from '../../src/cli/commands.js';
import type { Config } from '../../src/config.js';
import { createPlatform, type Platform } from '../../src/platform.js';

async function withDb<T>(config: Config, run: (p: Platform) => Promise<T>): Promise<T> {
  const p = await createPlatform(config, { projections: allProjections, startWorkers: false });
  try {
    return await run(p);
  } finally {
    await p.close();
  }
}

async function verifyLines(config: Config, options: Parameters<typeof verifyCommand>[3]) {
  const lines: string[] = [];
  const ok = await verifyCommand(config, allProjections, (line) => lines.push(line), options);
  return { ok, text: lines.join('\n'), lines };
}

const quiet = () => undefined;

t.test('verify on the command line; export then import keeps hash versions, recorded_at and signatures, and import checks them', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signed-export-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = generateLogKeyCommand(quiet, path.join(dir, 'keys'));
  const source: Config = { ...(await testConfig()), dataDir: path.join(dir, 'source'), logSigningKey: readFileSync(key.privateFile, 'utf8') };
  await withDb(source, async (p) => {
    for (let i = 0; i < 3; i++) {
      await p.store.append([{ streamId: `thing-${i}`, expectedVersion: undefined, events: [{ type: 'ThingHappened', data: { i } }, { type: 'ThingHappened', data: { i } }] }], testMetadata());
    }
  });
  const checked = await verifyLines(source, { publicKeyFiles: [key.publicFile] });
  t.equal(checked.ok, true, checked.text);
  t.match(checked.text, /signatures: 3 verified; last signed position 6; 0 unsigned events after it/, 'signed as the platform closed');
  const head = checked.lines.find((line) => line.startsWith('head: '))!;
  t.match(head, /^head: 6 [0-9a-f]{64}$/, 'verify prints the line to keep in a heads file');
  const headsFile = path.join(dir, 'heads.txt');
  writeFileSync(headsFile, `${head}\n`);
  t.equal((await verifyLines(source, { headsFile })).ok, true, 'verify --heads with a kept head');
  writeFileSync(headsFile, `6 ${'a'.repeat(64)}\n`);
  const fake = await verifyLines(source, { headsFile });
  t.equal(fake.ok, false);
  t.match(fake.text, /the kept head at position 6 is not in the chain/);

  const file = path.join(dir, 'log.jsonl');
  t.equal(await exportCommand(source, allProjections, quiet, file), 6);
  const line = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
  t.equal(line.hash_version, 2);
  t.match(line.recorded_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

  // A forged signature in the export: the import with the key refuses it and keeps nothing.
  const signatures = readFileSync(`${file}.signatures`, 'utf8').trim().split('\n');
  t.equal(signatures.length, 3);
  const row = JSON.parse(signatures[2]!) as { signature: string };
  const flipped = Buffer.from(row.signature, 'base64');
  flipped[1] = flipped[1]! ^ 1;
  const forged = path.join(dir, 'forged.jsonl');
  writeFileSync(forged, readFileSync(file));
  writeFileSync(`${forged}.signatures`, `${[...signatures.slice(0, 2), JSON.stringify({ ...row, signature: flipped.toString('base64') })].join('\n')}\n`);
  const target: Config = { ...(await testConfig()), dataDir: path.join(dir, 'target') };
  await t.rejects(importCommand(target, allProjections, quiet, forged, undefined, { publicKeyFiles: [key.publicFile] }), /does not verify: the signature at position 6 does not verify/);
  // Without the key an import still refuses a signed head that is not the chain's.
  writeFileSync(`${forged}.signatures`, `${[...signatures.slice(0, 2), JSON.stringify({ ...row, hash: 'e'.repeat(64) })].join('\n')}\n`);
  await t.rejects(importCommand(target, allProjections, quiet, forged), /the signed head at position 6 does not match the chain/);

  const lines: string[] = [];
  t.equal(await importCommand(target, allProjections, (l) => lines.push(l), file, undefined, { publicKeyFiles: [key.publicFile] }), 6, 'the target is still empty');
  t.match(lines.join('\n'), /imported 3 signatures, all verified/);
  const imported = await verifyLines(target, { publicKeyFiles: [key.publicFile] });
  t.equal(imported.ok, true, imported.text);
  t.equal(imported.lines.find((l) => l.startsWith('head: ')), head, 'same head');
  t.match(imported.text, /signatures: 3 verified; last signed position 6; 0 unsigned/);
});
