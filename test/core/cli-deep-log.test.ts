import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { testConfig } from '../helpers/config.js';
import { allProjections } from '../../projections/index.js';
import { createUserCommand, exportCommand, importCommand, replayCommand, verifyCommand } from '../../src/cli/commands.js';
import { createPlatform } from '../../src/platform.js';
import { appendRaw, deepJsonText } from '../helpers/raw-append.js';

async function headOf(config: Awaited<ReturnType<typeof testConfig>>) {
  const p = await createPlatform(config, { projections: allProjections, startWorkers: false });
  try {
    return await p.store.head();
  } finally {
    await p.close();
  }
}

t.test('verify, export, import and replay take an event of any depth the database holds', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cli-deep-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const source = { ...(await testConfig()), dataDir: path.join(dir, 'source') };
  const out = () => undefined;
  await createUserCommand(source, allProjections, out, { email: 'dee@example.com', fullName: 'Dee', role: 400 });
  // A queue registered with a narrow 4,800 levels deep, as the server once accepted.
  const p = await createPlatform(source, { projections: allProjections, startWorkers: false });
  const queueId = randomUUID();
  await appendRaw(p.db, `queue-${queueId}`, 'QueueRegistered',
    `{"queue_id":"${queueId}","user_id":1,"realm_id":1,"event_types":null,"narrow":[["stream",${deepJsonText(2_400)}]],"options":{},"lifespan_secs":600,"created_at":1}`);
  await p.close();
  const head = await headOf(source);

  t.equal(await verifyCommand(source, allProjections, out), true, 'verify');
  const file = path.join(dir, 'log.jsonl');
  t.equal(await exportCommand(source, allProjections, out, file), head.position, 'export');
  const target = { ...(await testConfig()), dataDir: path.join(dir, 'target') };
  t.equal(await importCommand(target, allProjections, out, file), head.position, 'import');
  t.same(await headOf(target), head, 'the imported chain ends in the same head');
  const replayed = path.join(dir, 'replayed');
  await replayCommand(source, allProjections, out, { until: String(head.position), database: replayed });
  t.same(await headOf({ ...source, dataDir: replayed }), head, 'replay copies it');
});
