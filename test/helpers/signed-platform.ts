import type { Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testConfig } from './config.js';
import { testMetadata } from './platform.js';
import { generateLogKeyCommand, readPublicKeys } from '../../src/cli/commands.js';
import { createPlatform, type Platform } from '../../src/platform.js';

const quiet = () => undefined;

/** A fresh log (no projections, no workers) whose store signs with a new key; the key's files, its public key and the configuration. */
export async function signedPlatform(t: Test) {
  const dir = mkdtempSync(path.join(tmpdir(), 'signed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = generateLogKeyCommand(quiet, path.join(dir, 'keys'));
  const config = await testConfig({ logSigningKey: readFileSync(key.privateFile, 'utf8') });
  const p = await createPlatform(config, { projections: [], inMemory: !config.databaseUrl, startWorkers: false });
  t.teardown(() => p.close());
  const [publicKey] = readPublicKeys([key.publicFile]);
  return { p, dir, key, config, publicKeys: [publicKey!] };
}

/** Appends one committed batch of `size` ThingHappened events to the stream `thing-<batch>`. */
export async function appendThings(p: Platform, batch: number, size: number): Promise<void> {
  await p.store.append([{ streamId: `thing-${batch}`, expectedVersion: undefined, events: Array.from({ length: size }, (_, n) => ({ type: 'ThingHappened', data: { n } })) }], testMetadata());
}
