import { renderMarkdown } from '../src/markdown/index.js';
import { adversarialFamilies } from '../test/helpers/markdown-adversarial.js';
import { testContext } from '../test/unit/markdown/fixtures.js';
const ctx = testContext();
const fams = (process.env.FAM ?? 'table rows').split(',');
for (const fam of fams) {
  const input = adversarialFamilies[fam]!(10_000);
  const times: number[] = [];
  for (let i = 0; i < Number(process.env.N ?? 30); i++) {
    const t = performance.now();
    try { renderMarkdown(input, ctx); } catch (e) { }
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(fam, 'best', times[0]!.toFixed(2), 'median', times[times.length >> 1]!.toFixed(2), 'worst', times.at(-1)!.toFixed(2));
}
