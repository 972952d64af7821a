// Compares our reading of `<time:…>` bodies with python-dateutil's (the real server's parser) on generated
// inputs. Usage: npx tsx scripts/dates/compare.ts [count] [--show N]
// Needs python3 with python-dateutil; prints each input read differently and the totals.
import { generatedDateInputs } from './generate.js';
import { readingDifferences } from './oracle.js';

const count = Number(process.argv[2] ?? 8000);
const showAt = process.argv.indexOf('--show');
const show = showAt > 0 ? Number(process.argv[showAt + 1]) : 200;

const inputs = generatedDateInputs(count);
const differences = readingDifferences(inputs);
for (const { body, dateutil, ours } of differences.slice(0, show)) {
  console.log(`${JSON.stringify(body)}\n  dateutil ${dateutil}\n  ours     ${ours}`);
}
console.log(`${inputs.length} inputs, ${differences.length} read differently`);
