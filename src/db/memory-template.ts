import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { migrationFolder } from './migrate.js';

/*
 * A migrated, empty in-memory database is kept on disk between processes (tests start one process
 * per file), named by a digest of every migration and the PGlite version, so a changed migration
 * can never load a stale template.
 */
function templatePath(): string {
  const pgliteDist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  const pgliteVersion = readFileSync(path.join(pgliteDist, '..', 'package.json'));
  return path.join(os.tmpdir(), `zulip-es-pglite-template-${migrationsDigest(pgliteVersion)}.tar`);
}

/** Names every migration's file name and content (and anything else given) in 24 hex digits. */
export function migrationsDigest(...extra: Array<string | Buffer>): string {
  const digest = createHash('sha256');
  for (const part of extra) digest.update(part);
  for (const name of readdirSync(migrationFolder).sort()) {
    digest.update(name);
    digest.update(readFileSync(path.join(migrationFolder, name)));
  }
  return digest.digest('hex').slice(0, 24);
}

export function loadSharedTemplate(): Blob | undefined {
  try {
    return new Blob([readFileSync(templatePath())]);
  } catch {
    return undefined;
  }
}

export async function saveSharedTemplate(template: Blob): Promise<void> {
  writeWhole(templatePath(), Buffer.from(await template.arrayBuffer()));
}

/** Writes a file aside and renames it into place, so a concurrent reader (another process) sees the whole file or none. */
export function writeWhole(target: string, data: string | Buffer): void {
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, data);
  renameSync(partial, target);
}
