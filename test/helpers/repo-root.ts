import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder the running code was loaded from: test-build/ when the tests run compiled, else the repository. */
const codeRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The repository's root (package.json, docs/, src/*.ts): two folders above this file, or three when
 * it runs compiled from test-build/ (npm test, scripts/test.mjs).
 */
export const repoRoot = existsSync(path.join(codeRoot, 'package.json')) ? codeRoot : path.dirname(codeRoot);

/** A file of `../shared/reference/` beside the repository root; a git worktree sits one level deeper, so look upward. */
export function findReference(name: string): string {
  for (let dir = repoRoot; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '..', 'shared', 'reference', name);
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${name} not found in any ../shared/reference above the repository`);
  }
}

const compiled = codeRoot !== repoRoot;

/**
 * Node's arguments that run one of our entry points (`src/server`, `src/cli/main`) as this process runs its own
 * code: compiled from test-build/ under npm test, else the TypeScript source through tsx. Run with cwd repoRoot.
 */
export function entryPointArgs(entry: string): string[] {
  return compiled ? [path.join(codeRoot, `${entry}.js`)] : ['--import', 'tsx', `${entry}.ts`];
}
