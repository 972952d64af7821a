// `npm test [tap options] [test files or globs]`: compiles the sources and the tests to JavaScript in
// test-build/ (the repository's layout one folder down) and runs tap on the compiled test files, named
// in arguments by their TypeScript paths (test/api/messages.test.ts, 'test/api/*-events.test.ts').
// With no file named, it runs the folders of tap.include in package.json.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { compileEach, serverSources } from './compile.mjs';

const outdir = 'test-build';

const typeScriptTest = /^test\/.*\.ts$/;
const toCompiled = (file) => `${outdir}/${file.replace(/\.ts$/, '.js')}`;

const args = process.argv.slice(2);
const files = args.filter((arg) => typeScriptTest.test(arg));
const options = args.filter((arg) => !typeScriptTest.test(arg));
const include = JSON.parse(readFileSync('package.json', 'utf8')).tap.include;

rmSync(outdir, { recursive: true, force: true });
await compileEach([...serverSources, 'scripts/dates/**/*', 'test/**/*.ts', 'test/**/*.json'], outdir);

const run = spawnSync('npx', ['--no-install', 'tap', ...options, ...(files.length ? files : include).map(toCompiled)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
