// `npm run build`: every source file to its own JavaScript file under the output folder (the CLI,
// the migrations kysely loads one by one, the assets read at run time), then the server entry once
// more as one bundle of our own code over it, so a start loads one module of ours instead of ~370
// (module loading was the largest part of start-up; npm packages stay separate files).
// `--outdir=<dir>` writes elsewhere (the tests build into a folder of their own).
import { build } from 'esbuild';

const outdir = process.argv.findLast((arg) => arg.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';
const common = { platform: 'node', format: 'esm', target: 'node20', sourcemap: true, logLevel: 'warning' };

await build({
  ...common,
  entryPoints: ['src/**/*.*', 'projections/**/*.ts', 'migrations/**/*.ts'],
  loader: { '.json': 'copy', '.eta': 'copy', '.css': 'copy', '.md': 'copy', '.py': 'copy' },
  outdir,
  outbase: '.',
});
await build({
  ...common,
  entryPoints: ['src/server.ts'],
  bundle: true,
  packages: 'external',
  outfile: `${outdir}/src/server.js`,
  allowOverwrite: true,
});
