// Compares our reading of `<time:…>` bodies with python-dateutil's (the real server's parser) on generated
// inputs. Usage: npx tsx scripts/dates/compare.ts [count] [--show N]
// Needs python3 with python-dateutil; prints each input read differently and the totals.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseGlobalTime, zoneAbbreviations } from '../../src/markdown/time.js';
import { generatedDateInputs } from './generate.js';

const now = new Date('2026-11-26T15:51:00Z');
const count = Number(process.argv[2] ?? 8000);
const showAt = process.argv.indexOf('--show');
const show = showAt > 0 ? Number(process.argv[showAt + 1]) : 200;

const inputs = generatedDateInputs(count);
const oracle = spawnSync(
  'python3',
  [fileURLToPath(new URL('./dateutil-oracle.py', import.meta.url)), JSON.stringify(zoneAbbreviations), '2026-11-26T00:00:00'],
  { input: inputs.map((s) => JSON.stringify(s)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28 },
);
if (oracle.status !== 0) throw new Error(`dateutil oracle failed: ${oracle.stderr}`);
const expected = oracle.stdout.trim().split('\n').map((line) => JSON.parse(line) as string | null);

// Whole seconds on both sides: how a value becomes the datetime attribute is not compared here.
const seconds = (iso: string | null): string | null => iso?.replace(/\.\d+Z$/, 'Z') ?? null;
let differ = 0;
inputs.forEach((input, i) => {
  const ours = parseGlobalTime(input, now)?.toISOString() ?? null;
  const theirs = expected[i] ?? null;
  if (seconds(ours) === seconds(theirs)) return;
  differ++;
  if (differ <= show) console.log(`${JSON.stringify(input)}\n  dateutil ${theirs}\n  ours     ${ours}`);
});
console.log(`${inputs.length} inputs, ${differ} read differently`);
