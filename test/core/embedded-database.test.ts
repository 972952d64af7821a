import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, sql } from '../../src/db/database.js';

// PGlite's default 128 MB of shared buffers cost ~130 MiB of resident memory at start (see database.ts).
t.test('the embedded database, in memory and in a directory, starts with 16 MB of shared buffers', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-db-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  for (const options of [{}, { dataDir }]) {
    const handle = await openDatabase(options);
    try {
      const { rows } = await sql<{ shared_buffers: string }>`SHOW shared_buffers`.execute(handle.db);
      t.equal(rows[0]?.shared_buffers, '16MB', JSON.stringify(options));
    } finally {
      await handle.close();
    }
  }
});
