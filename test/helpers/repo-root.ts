import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const twoUp = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The repository's root (package.json, docs/, src/*.ts): two folders above this file, or three when
 * it runs compiled from test-build/ (npm test, scripts/test.mjs).
 */
export const repoRoot = existsSync(path.join(twoUp, 'package.json')) ? twoUp : path.dirname(twoUp);

/** A file of `../shared/reference/` beside the repository root; a git worktree sits one level deeper, so look upward. */
export function findReference(name: string): string {
  for (let dir = repoRoot; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '..', 'shared', 'reference', name);
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${name} not found in any ../shared/reference above the repository`);
  }
}
