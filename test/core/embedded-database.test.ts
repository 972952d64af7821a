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

// A first start closes the instance that ran initdb and opens the new directory again (database.ts;
// its memory is measured by bench/startup.ts): what is written then is on disk for the next start.
t.test('a fresh data directory, opened again after initdb, keeps what is written', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-db-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await openDatabase({ dataDir });
  try {
    await sql`CREATE TABLE kept (note text)`.execute(first.db);
    await sql`INSERT INTO kept VALUES ('written on the first start')`.execute(first.db);
  } finally {
    await first.close();
  }
  const again = await openDatabase({ dataDir });
  try {
    const { rows } = await sql<{ note: string }>`SELECT note FROM kept`.execute(again.db);
    t.same(rows, [{ note: 'written on the first start' }]);
  } finally {
    await again.close();
  }
});
