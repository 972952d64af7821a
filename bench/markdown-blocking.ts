/**
 * Main-thread blocking by Markdown rendering (issue 24 item 1): for each pathological 10,000-character family,
 * the longest the event loop stands still while one message renders, as a client waiting on any other request
 * would see it. "inline" renders on the main thread (how every message rendered before the render pool);
 * "pool" goes through renderMarkdownAsync (a worker thread, cut off after RENDER_TIMEOUT_MS). "idle" is the
 * same gap measured while nothing renders: the floor of this machine at this load.
 *
 *   npx tsx bench/markdown-blocking.ts     (also run at the end of bench/markdown.ts)
 */
import os from 'node:os';
import { emptyRenderContext, renderMarkdown, renderMarkdownAsync } from '../src/markdown/index.js';
import { adversarialFamilies, repeatedNestedLists } from '../test/helpers/markdown-adversarial.js';

export const blockingFamilies: Record<string, string> = {
  ...Object.fromEntries(
    ['table rows', 'hard line breaks', 'backtick runs', 'bracket pairs', 'links', 'nested quotes', 'nested bullets', 'quote fences'].map((name) => [name, adversarialFamilies[name]!(10_000)]),
  ),
  'nested lists, repeated': repeatedNestedLists(10_000),
};

/** The longest gap between 1 ms timer ticks while `work` runs, minus the tick itself. */
async function worstGap(work: () => Promise<unknown>): Promise<number> {
  let worst = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  // Let the timer start before the work can block it.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await work().catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(tick);
  return Math.max(0, worst);
}

export interface BlockingRow {
  family: string;
  inline_block_ms: number;
  pool_block_ms: number;
  pool_answer_ms: number;
  pool_status: 'rendered' | 'refused';
}

export async function measureBlocking(): Promise<{ load_average_1m: number; idle_block_ms: number; rows: BlockingRow[] }> {
  const ctx = emptyRenderContext('http://localhost');
  // Warm both paths: the first render of a thread compiles the renderer.
  renderMarkdown('warm *up*', ctx);
  await renderMarkdownAsync('warm '.repeat(400), ctx).catch(() => undefined);
  const idle = await worstGap(() => new Promise((resolve) => setTimeout(resolve, 300)));
  const rows: BlockingRow[] = [];
  for (const [family, content] of Object.entries(blockingFamilies)) {
    const inline = await worstGap(async () => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      try {
        renderMarkdown(content, ctx);
      } catch {
        // refused: the time to refuse still blocked the loop
      }
    });
    let status: BlockingRow['pool_status'] = 'rendered';
    const started = performance.now();
    let answered = 0;
    const pool = await worstGap(() =>
      renderMarkdownAsync(content, ctx).then(
        () => (answered = performance.now() - started),
        () => {
          answered = performance.now() - started;
          status = 'refused';
        },
      ),
    );
    const row = { family, inline_block_ms: round(inline), pool_block_ms: round(pool), pool_answer_ms: round(answered), pool_status: status };
    rows.push(row);
    console.log(family.padEnd(24), Object.entries(row).slice(1).map(([k, v]) => `${k}=${v}`).join(' '));
  }
  return { load_average_1m: round(os.loadavg()[0]!), idle_block_ms: round(idle), rows };
}

const round = (n: number): number => Math.round(n * 10) / 10;

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);
  const result = await measureBlocking();
  console.log(`idle gap ${result.idle_block_ms} ms; load average at end ${result.load_average_1m}`);
  process.exit(0);
}
