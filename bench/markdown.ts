/**
 * Markdown rendering cost (issue 24): throughput and p99 over ordinary messages, and the worst time per input
 * size for every adversarial family (test/helpers/markdown-adversarial.ts) up to 10,000 characters, refused
 * inputs included (a refusal must be as cheap as a render). Writes bench/results/markdown.json.
 *
 *   BENCH_SECONDS=10 npx tsx bench/markdown.ts
 */
import os from 'node:os';
import { MarkdownRenderingError, renderMarkdown } from '../src/markdown/index.js';
import { adversarialFamilies, typicalMessages } from '../test/helpers/markdown-adversarial.js';
import { testContext } from '../test/unit/markdown/fixtures.js';
import { percentile, writeResult } from './util.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const sizes = [1_250, 2_500, 5_000, 10_000];
const runsPerInput = Number(process.env.BENCH_RUNS ?? 5);
const targetMs = 50;
const ctx = testContext();

function timed(content: string): { ms: number; refused: boolean } {
  const started = performance.now();
  try {
    renderMarkdown(content, ctx);
    return { ms: performance.now() - started, refused: false };
  } catch (error) {
    if (!(error instanceof MarkdownRenderingError)) throw error;
    return { ms: performance.now() - started, refused: true };
  }
}

// Ordinary messages, round-robin, for a fixed wall-clock time.
for (const message of typicalMessages) timed(message);
const latencies: number[] = [];
const until = performance.now() + seconds * 1000;
for (let i = 0; performance.now() < until; i++) latencies.push(timed(typicalMessages[i % typicalMessages.length]!).ms);
const totalSeconds = latencies.reduce((a, b) => a + b, 0) / 1000;
const typical = {
  messages: latencies.length,
  messages_per_s: Math.round(latencies.length / totalSeconds),
  p50_ms: percentile(latencies, 50),
  p99_ms: percentile(latencies, 99),
  max_ms: Number(Math.max(...latencies).toFixed(2)),
};
console.log('typical', typical);

// Adversarial families: the worst of a few runs per size (the event loop is blocked for the worst one).
const adversarial: Record<string, Record<string, { worst_ms: number; best_ms: number; refused: boolean }>> = {};
let worstAt10k = { family: '', ms: 0 };
for (const [name, family] of Object.entries(adversarialFamilies)) {
  adversarial[name] = {};
  for (const size of sizes) {
    const input = family(size);
    timed(input);
    const runs = Array.from({ length: runsPerInput }, () => timed(input));
    const worst = Math.max(...runs.map((r) => r.ms));
    const best = Math.min(...runs.map((r) => r.ms));
    adversarial[name][String(size)] = { worst_ms: Number(worst.toFixed(2)), best_ms: Number(best.toFixed(2)), refused: runs[0]!.refused };
    if (size === 10_000 && worst > worstAt10k.ms) worstAt10k = { family: name, ms: Number(worst.toFixed(2)) };
  }
  console.log(name.padEnd(22), sizes.map((s) => `${adversarial[name]![String(s)]!.worst_ms.toFixed(1)}${adversarial[name]![String(s)]!.refused ? 'R' : ''}`).join('  '));
}

const file = writeResult('markdown', {
  benchmark: 'markdown',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)) },
  target: { per_message_ms: `<= ${targetMs} for any input up to 10,000 characters` },
  typical,
  adversarial_sizes: sizes,
  adversarial,
  worst_at_10000: worstAt10k,
  meets_target: worstAt10k.ms <= targetMs && typical.p99_ms <= targetMs,
});
console.log(`wrote ${file}`);
