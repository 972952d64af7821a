import type { Config, FileStorageKind } from '../config.js';
import { createPlatform } from '../platform.js';
import type { Projection } from '../projections-api.js';
import { openStorage } from '../storage/index.js';
import { migrateFiles, type FileMigrationReport } from '../services/file-migration.js';

type Out = (line: string) => void;

export const FILE_STORAGE_KINDS: readonly FileStorageKind[] = ['local', 'postgres', 's3'];

/** `migrate-files --from <kind> --to <kind>`: copies and verifies every referenced file; the report decides the exit code. */
export async function migrateFilesCommand(config: Config, projections: readonly Projection[], out: Out, from: FileStorageKind, to: FileStorageKind): Promise<FileMigrationReport> {
  if (from === to) throw new Error('--from and --to name the same store');
  for (const kind of [from, to]) {
    if (kind === 'postgres' && !config.databaseUrl) throw new Error('the postgres store needs DATABASE_URL');
    if (kind === 's3' && !config.s3) throw new Error('the s3 store needs S3_BUCKET (and S3_ENDPOINT, S3_REGION, credentials)');
  }
  const platform = await createPlatform(config, { projections, startWorkers: false });
  try {
    const report = await migrateFiles(platform.db, openStorage(from, config, platform.db), openStorage(to, config, platform.db), out);
    out(
      `migrate-files ${from} -> ${to}: ${report.copied} copied (${report.bytes} bytes), ${report.present} already there, ` +
        `${report.missing.length} missing, ${report.mismatched.length} mismatched`,
    );
    return report;
  } finally {
    await platform.close();
  }
}
