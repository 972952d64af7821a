// Compiles TypeScript sources one file to one JavaScript file under an output folder, keeping the
// folder layout (outbase is the repository root) and copying the files read at run time beside them.
import { build } from 'esbuild';

export const esbuildCommon = { platform: 'node', format: 'esm', target: 'node20', sourcemap: true, logLevel: 'warning' };

/** The server's own sources: what `npm run build` compiles, and the tests import. */
export const serverSources = ['src/**/*.*', 'projections/**/*.ts', 'migrations/**/*.ts'];

const copied = { '.json': 'copy', '.eta': 'copy', '.css': 'copy', '.md': 'copy', '.py': 'copy' };

/** `entryPoints`: esbuild globs from the repository root (src/**\/*.*, test/**\/*.ts, ...). */
export async function compileEach(entryPoints, outdir) {
  await build({ ...esbuildCommon, entryPoints, loader: copied, outdir, outbase: '.' });
}
