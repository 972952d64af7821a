/**
 * The cost of Pygments highlighting as a sender sees it: wall time of renderMarkdownAsync for the realistic
 * messages that hold a code block Pygments highlights (bench/markdown-corpus.ts, plus a few of other
 * languages), with the helper process running, beside the floor measured in the same run: the same messages
 * with highlighting off (PygmentsClient python 'off'; the same render, no helper round trip). Also: the first
 * highlight after start (Python and Pygments importing), and 32 blocks at once.
 *
 *   npx tsx bench/markdown-highlight.ts        (BENCH_SECONDS=5) → bench/results/markdown-highlight.json
 */
import os from 'node:os';
import { highlightCodeBlocks } from '../src/markdown/code-highlight.js';
import { PygmentsClient } from '../src/markdown/pygments-client.js';
import { renderMarkdownWithCodeBlocks } from '../src/markdown/render.js';
import { testContext } from '../test/unit/markdown/fixtures.js';
import { realisticMessages } from './markdown-corpus.js';
import { percentile, writeResult } from './util.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const ctx = testContext();
const messages = [
  ...realisticMessages.filter((m) => renderMarkdownWithCodeBlocks(m, ctx).codeBlocks.length > 0),
  'Try this:\n```js\nconst total = items.reduce((sum, item) => sum + item.price * item.count, 0);\nconsole.log(`total: ${total}`);\n```\nIt should print the sum.',
  '```sql\nSELECT id, name FROM users WHERE realm_id = 2 AND is_active ORDER BY name LIMIT 50;\n```',
  '```bash\nfor f in *.log; do gzip -9 "$f" && mv "$f.gz" archive/; done\n```\nRun it from the log folder.',
];

async function renderWith(client: PygmentsClient, content: string): Promise<string> {
  const { result, codeBlocks } = renderMarkdownWithCodeBlocks(content, ctx);
  return highlightCodeBlocks(result.html, codeBlocks, client);
}

async function measure(client: PygmentsClient): Promise<{ count: number; p50: number; p99: number; max: number }> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const started = performance.now();
    await renderWith(client, messages[i % messages.length]!);
    times.push(performance.now() - started);
  }
  return { count: times.length, p50: percentile(times, 50), p99: percentile(times, 99), max: percentile(times, 100) };
}

const helper = new PygmentsClient({ python: process.env.PYGMENTS_PYTHON?.trim() || 'python3' });
const off = new PygmentsClient({ python: 'off' });

let started = performance.now();
const first = await renderWith(helper, messages[0]!);
const firstMs = Number((performance.now() - started).toFixed(1));
if (!first.includes('<span class="k">')) throw new Error('the helper did not highlight: is Pygments installed?');

const floor = await measure(off);
const highlighted = await measure(helper);
started = performance.now();
await Promise.all(Array.from({ length: 32 }, (_, i) => renderWith(helper, messages[i % messages.length]!)));
const burst32Ms = Number((performance.now() - started).toFixed(1));
helper.close();

const result = {
  when: new Date().toISOString(),
  load: os.loadavg().map((l) => Number(l.toFixed(2))),
  messages: messages.length,
  firstHighlightMs: firstMs,
  floorHighlightingOff: floor,
  highlighted,
  p99RatioToFloor: Number((highlighted.p99 / Math.max(floor.p99, 0.01)).toFixed(1)),
  burst32Ms,
};
console.log(JSON.stringify(result, null, 2));
console.log(`wrote ${writeResult('markdown-highlight', result)}`);
