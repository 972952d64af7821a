// Runs `tap build` after an install when tap is present (it is a dev dependency).
// tap ships built with its default plugins, TypeScript's ts-node loader among them. Its runner
// notices that package.json turns that plugin off and rebuilds, but only after it has chosen the
// loaders for the run in progress, so the first `npm test` after an install would compile every
// test file's imports with ts-node as well (tens of seconds per file).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (existsSync(new URL('../node_modules/.bin/tap', import.meta.url))) {
  const { status } = spawnSync('npx', ['--no-install', 'tap', 'build'], { stdio: 'inherit' });
  process.exit(status ?? 1);
}
