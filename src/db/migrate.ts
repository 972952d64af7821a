import { Migrator, FileMigrationProvider, type MigrationResultSet } from 'kysely';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './database.js';

export const migrationFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
