import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from './server.js';

/** A test server with its own data directory (uploads land there) whose forgetting job runs only when asked. */
export async function serverWithDataDir(t: Test): Promise<{ s: TestServer; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'forget-rest-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir, forgettingIntervalSeconds: 0 });
  return { s, dataDir };
}

/** Whether the data key `keyId` still exists. */
export async function hasDataKey(s: TestServer, keyId: string): Promise<boolean> {
  return (await s.platform.db.selectFrom('data_keys').select('key_id').where('key_id', '=', keyId).executeTakeFirst()) !== undefined;
}
