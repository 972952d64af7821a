import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder that holds `src/` and `migrations/` for this run: the repository under a TypeScript
 * loader, `dist/` when compiled. Files read at run time are named from here rather than from each
 * module's own URL, so they are found the same whether a module runs as its own file or inside the
 * server's bundle (dist/src/server.js, one level below the root like this file).
 */
export const sourceRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A file or folder shipped beside the code, by its path from the root (`src/emoji/zulip-emoji.json`). */
export const shippedPath = (relative: string) => path.join(sourceRoot, relative);
