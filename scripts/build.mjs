// `npm run build`: every source file to its own JavaScript file under the output folder (the CLI,
// the migrations kysely loads one by one, the assets read at run time), then the server entry once
// more as one bundle of our own code over it, so a start loads one module of ours instead of ~370
// (module loading was the largest part of start-up; npm packages stay separate files).
// `--outdir=<dir>` writes elsewhere (the tests build into a folder of their own).
import { build } from 'esbuild';
import { compileEach, esbuildCommon, serverSources } from './compile.mjs';

const outdir = process.argv.findLast((arg) => arg.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';

await compileEach(serverSources, outdir);
await build({
  ...esbuildCommon,
  entryPoints: ['src/server.ts'],
  bundle: true,
  packages: 'external',
  outfile: `${outdir}/src/server.js`,
  allowOverwrite: true,
});
