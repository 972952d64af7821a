import { Migrator, FileMigrationProvider, type MigrationResultSet } from 'kysely';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { shippedPath } from '../source-root.js';
import type { Db } from './database.js';

export const migrationFolder = shippedPath('migrations');

export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
