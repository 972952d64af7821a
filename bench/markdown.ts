/**
 * Markdown rendering cost (issues 19 and 24). Targets: p99 under 1 ms for a typical 300-character message, and
 * no input of up to 10,000 characters over 50 ms on one idle core.
 *
 * - Throughput: realistic ~300-character messages (bench/markdown-corpus.ts), round-robin for BENCH_SECONDS;
 *   messages/s and p50/p99/max per message.
 * - Adversarial: every family of test/helpers/markdown-adversarial.ts and its parser-bound long lists and tables,
 *   at 1,000 and 10,000 characters, plus random soups of the DoS property test's pieces at 10,000, refused
 *   inputs included (a refusal must be as cheap as a render); the worst time per family.
 * - Floor, measured in the same run: plain remark-parse → remark-rehype → rehype-stringify of the same inputs
 *   (bench/markdown-floor.ts, in a worker thread cut off after BENCH_FLOOR_CAP_MS, since plain remark cannot
 *   handle some of the nesting families at all).
 * - Main-thread blocking (bench/markdown-blocking.ts): the event loop's longest stall while one pathological
 *   10,000-character message renders inline (before the render pool) and through renderMarkdownAsync (now).
 * - Baseline (optional): BENCH_BASELINE=/path/to/src/markdown/index.ts measures another checkout's renderer in
 *   the same run, for before/after figures.
 *
 * What is measured is renderMarkdown: the synchronous render in this thread, code blocks written plain. Pygments
 * highlighting (renderMarkdownAsync) is another process's CPU and an IPC wait: bench/markdown-highlight.ts measures
 * it apart.
 *
 * The typical figures come with what sets their tail: each message's own cost (best CPU time of repeated renders),
 * and the garbage collections that fell inside renders (a render that overlaps a GC pause pays for it).
 *
 * Time is CPU time of the process pinned to one core (re-run under `taskset` when available), so other load on
 * the machine inflates it less than wall-clock time; wall-clock figures are reported beside it. Writes
 * bench/results/markdown.json.
 *
 *   npx tsx bench/markdown.ts           (BENCH_SECONDS=10, BENCH_RUNS=5, BENCH_CPU, BENCH_FLOOR_CAP_MS=3000)
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { MarkdownRenderingError, renderMarkdown } from '../src/markdown/index.js';
import type { RenderContext, RenderResult } from '../src/markdown/index.js';
import { adversarialFamilies, parserBound, soupPieces } from '../test/helpers/markdown-adversarial.js';
import { testContext } from '../test/unit/markdown/fixtures.js';
import { messageKinds, realisticMessages } from './markdown-corpus.js';
import type { FloorReply, FloorRequest } from './markdown-floor.js';
import { measureBlocking } from './markdown-blocking.js';
import { percentile, writeResult } from './util.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const floorCapMs = Number(process.env.BENCH_FLOOR_CAP_MS ?? 3_000);
const sizes = [1_000, 10_000];
const soups = 20;
const targetMs = 50;
const targetP99Ms = 1;

// One core: re-run pinned unless already pinned (or taskset is missing).
if (process.env.BENCH_PINNED === undefined && spawnSync('taskset', ['-V']).status === 0) {
  const cpu = process.env.BENCH_CPU ?? String(os.cpus().length - 1);
  const child = spawnSync('taskset', ['-c', cpu, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: cpu },
  });
  process.exit(child.status ?? 1);
}

type Render = (content: string, ctx: RenderContext) => RenderResult;
const ctx = testContext();
const baselinePath = process.env.BENCH_BASELINE;
const baseline = baselinePath ? ((await import(baselinePath)) as { renderMarkdown: Render }).renderMarkdown : undefined;

interface Timing {
  cpu: number;
  wall: number;
  refused: boolean;
}

function timed(render: Render, content: string): Timing {
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  let refused = false;
  try {
    render(content, ctx);
  } catch (error) {
    // Any refusal counts (the baseline's error class is its own copy).
    if (!(error instanceof Error) || (!(error instanceof MarkdownRenderingError) && error.message !== 'Unable to render message')) throw error;
    refused = true;
  }
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpuStart);
  return { cpu: (used.user + used.system) / 1000, wall, refused };
}

const round = (ms: number): number => Number(ms.toFixed(2));

/** The best CPU time of `runs` renders after one warm-up (the cost of the input), and the worst wall time. */
function measure(render: Render, content: string): { cpu: number; worstWall: number; refused: boolean } {
  timed(render, content);
  const all = Array.from({ length: runs }, () => timed(render, content));
  return { cpu: Math.min(...all.map((t) => t.cpu)), worstWall: Math.max(...all.map((t) => t.wall)), refused: all[0]!.refused };
}

let floorWorker: Promise<Worker> | undefined;
/** A floor worker that has loaded its modules (its start-up is not part of any measurement). */
function readyFloorWorker(): Promise<Worker> {
  // tsx's loader is registered inside the worker: a worker does not inherit --import.
  const script = new URL('./markdown-floor.ts', import.meta.url).href;
  floorWorker ??= new Promise((resolve) => {
    const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(script)}); })`, { eval: true });
    worker.once('message', () => resolve(worker));
  });
  return floorWorker;
}

/** Floor timings for `inputs`, or a note when plain remark fails or exceeds the cap. */
async function floor(inputs: string[], floorRuns: number, capMs: number): Promise<FloorReply | { note: string }> {
  const worker = await readyFloorWorker();
  const request: FloorRequest = { inputs, runs: floorRuns };
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      worker.removeAllListeners('message');
      void worker.terminate();
      floorWorker = undefined;
      resolve({ note: `over ${capMs} ms` });
    }, capMs);
    worker.once('message', (reply: FloorReply) => {
      clearTimeout(timer);
      resolve(reply.error ? { note: reply.error.includes('call stack') ? 'stack overflow' : reply.error } : reply);
    });
    worker.postMessage(request);
  });
}
const floorMs = (reply: FloorReply | { note: string }): number | string =>
  'note' in reply ? reply.note : round(Math.min(...reply.cpu.flat()));

const loadAtStart = os.loadavg()[0]!;

// Throughput over realistic messages.
for (let i = 0; i < 200; i++) timed(renderMarkdown, realisticMessages[i % realisticMessages.length]!);
const cpuTimes: number[] = [];
const wallTimes: number[] = [];
// When each render ran, and the GC pauses of the same stretch (delivered after the fact by the observer).
const renderSpans: number[] = [];
const gcPauses: { start: number; end: number; minor: boolean }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration, minor: kind === 1 });
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
const until = performance.now() + seconds * 1000;
for (let i = 0; performance.now() < until; i++) {
  const started = performance.now();
  const t = timed(renderMarkdown, realisticMessages[i % realisticMessages.length]!);
  renderSpans.push(started, performance.now());
  cpuTimes.push(t.cpu);
  wallTimes.push(t.wall);
}
await new Promise((resolve) => setTimeout(resolve, 50));
gcObserver.disconnect();
const cpuSeconds = cpuTimes.reduce((a, b) => a + b, 0) / 1000;
// Renders during which a GC pause ran (both sorted by time: one pass).
const duringGc = new Set<number>();
for (let r = 0, g = 0; r < cpuTimes.length && g < gcPauses.length; ) {
  const [start, end] = [renderSpans[2 * r]!, renderSpans[2 * r + 1]!];
  const pause = gcPauses[g]!;
  if (pause.end < start) g++;
  else if (pause.start > end) r++;
  else {
    duringGc.add(r);
    r++;
  }
}
const outsideGc = cpuTimes.filter((_, r) => !duringGc.has(r));
const gcDurations = gcPauses.map((p) => p.end - p.start).sort((a, b) => a - b);

// Each message's own cost: the best and the median CPU time of 30 renders after warm-up (with a baseline, its
// renders alternate with ours, so that a change in the machine's load falls on both alike).
const perMessage = realisticMessages.map((message, index) => {
  for (let i = 0; i < 5; i++) {
    timed(renderMarkdown, message);
    if (baseline) timed(baseline, message);
  }
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < 30; i++) {
    ours.push(timed(renderMarkdown, message).cpu);
    if (baseline) theirs.push(timed(baseline, message).cpu);
  }
  const [best, median] = [percentile(ours, 0), percentile(ours, 50)];
  return {
    message: index,
    holds: messageKinds[index] ?? '',
    characters: message.length,
    best_ms: best,
    median_ms: median,
    ...(baseline ? { baseline_best_ms: percentile(theirs, 0), baseline_median_ms: percentile(theirs, 50) } : {}),
  };
});
const floorTypical = await floor(realisticMessages, 200, 60_000);
const floorTypicalCpu = 'note' in floorTypical ? [] : floorTypical.cpu.map((perInput) => perInput.slice(20)).flat();
let baselineTypical: { messages_per_s: number; p99_ms: number } | undefined;
if (baseline) {
  for (let i = 0; i < 200; i++) timed(baseline, realisticMessages[i % realisticMessages.length]!);
  const times = Array.from({ length: Math.min(cpuTimes.length, 20_000) }, (_, i) => timed(baseline, realisticMessages[i % realisticMessages.length]!).cpu);
  baselineTypical = { messages_per_s: Math.round(times.length / (times.reduce((a, b) => a + b, 0) / 1000)), p99_ms: percentile(times, 99) };
}
const typical = {
  messages_in_corpus: realisticMessages.length,
  mean_characters: Math.round(realisticMessages.reduce((a, m) => a + m.length, 0) / realisticMessages.length),
  renders: cpuTimes.length,
  messages_per_s: Math.round(cpuTimes.length / cpuSeconds),
  p50_ms: percentile(cpuTimes, 50),
  p99_ms: percentile(cpuTimes, 99),
  max_ms: round(Math.max(...cpuTimes)),
  wall_p99_ms: percentile(wallTimes, 99),
  wall_max_ms: round(Math.max(...wallTimes)),
  floor_messages_per_s: floorTypicalCpu.length ? Math.round(floorTypicalCpu.length / (floorTypicalCpu.reduce((a, b) => a + b, 0) / 1000)) : null,
  floor_p99_ms: floorTypicalCpu.length ? percentile(floorTypicalCpu, 99) : null,
  ...(baselineTypical ? { baseline_messages_per_s: baselineTypical.messages_per_s, baseline_p99_ms: baselineTypical.p99_ms } : {}),
  gc: {
    minor_pauses: gcPauses.filter((p) => p.minor).length,
    other_pauses: gcPauses.filter((p) => !p.minor).length,
    pause_p50_ms: gcDurations.length ? percentile(gcDurations, 50) : null,
    pause_max_ms: gcDurations.length ? round(gcDurations[gcDurations.length - 1]!) : null,
    renders_with_a_pause_percent: Number(((100 * duringGc.size) / cpuTimes.length).toFixed(2)),
    // A diagnostic, not the figure: the same renders less those a GC pause fell into.
    p99_ms_of_renders_without_a_pause: outsideGc.length ? percentile(outsideGc, 99) : null,
  },
  per_message: perMessage,
};
console.log('typical', typical);

// Adversarial families, and random soups of the property test's pieces.
let seed = 24;
const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
function soup(size: number): string {
  let out = '';
  while (out.length < size) out += soupPieces[Math.floor(random() * soupPieces.length)];
  return out.slice(0, size);
}
const families: Record<string, (size: number) => string[]> = Object.fromEntries(
  Object.entries(adversarialFamilies).map(([name, family]) => [name, (size: number) => [family(size)]]),
);
families[`random soups (worst of ${soups})`] = (size) => Array.from({ length: soups }, () => soup(size));
// Kept out of the property test's families (they are over the target), reported here beside them.
for (const [name, input] of Object.entries(parserBound)) families[name] = (size) => [input(size)];

type Row = Record<string, string | number | boolean | null>;
const rows: Row[] = [];
for (const [name, inputsOf] of Object.entries(families)) {
  const row: Row = { family: name };
  for (const size of sizes) {
    const inputs = inputsOf(size);
    const ours = inputs.map((input) => measure(renderMarkdown, input));
    const worst = ours.reduce((a, b) => (b.cpu > a.cpu ? b : a));
    row[`ms_${size}`] = round(worst.cpu);
    if (size === 10_000) {
      row.wall_worst_ms_10000 = round(Math.max(...ours.map((o) => o.worstWall)));
      row.refused_10000 = ours.some((o) => o.refused);
      const floorReply = await floor(inputs, 3, floorCapMs * inputs.length);
      const floorValue = 'note' in floorReply ? floorReply.note : round(Math.max(...floorReply.cpu.map((perInput) => Math.min(...perInput))));
      row.floor_ms_10000 = floorValue;
      row.vs_floor = typeof floorValue === 'number' && floorValue > 0 ? Number((worst.cpu / floorValue).toFixed(2)) : null;
      if (baseline) row.baseline_ms_10000 = round(Math.max(...inputs.map((input) => measure(baseline, input).cpu)));
    }
  }
  rows.push(row);
  console.log(
    name.padEnd(30),
    Object.entries(row)
      .filter(([k]) => k !== 'family')
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
  );
}
void (await floorWorker)?.terminate();

// Main-thread blocking: what a client waiting on another request sees while one large message renders.
console.log('main-thread blocking at 10,000 characters (inline = before the render pool, pool = now)');
const blocking = await measureBlocking();

const worst = rows.reduce((a, b) => (Number(b.ms_10000) > Number(a.ms_10000) ? b : a));
const over = rows.filter((r) => Number(r.ms_10000) > targetMs).map((r) => String(r.family));
const file = writeResult('markdown', {
  benchmark: 'markdown',
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    pinned_cpu: process.env.BENCH_PINNED ?? 'not pinned',
    load_average_1m_at_start: round(loadAtStart),
    load_average_1m_at_end: round(os.loadavg()[0]!),
    node: process.version,
  },
  method:
    'renderMarkdown, the synchronous render (code blocks plain; Pygments highlighting is measured apart by bench/markdown-highlight.ts). ms = CPU time of one render on one pinned core (typical: every render of the round-robin run; adversarial and per_message best_ms: best of the runs after a warm-up, the cost of the input; wall_* = wall clock, worst run). floor = plain remark-parse + remark-rehype + rehype-stringify of the same input in the same run. gc = the GC pauses observed during the typical run and the share of renders they fell into.',
  target: { typical_p99_ms: targetP99Ms, any_input_up_to_10000_chars_ms: targetMs },
  typical,
  adversarial: rows,
  main_thread_blocking_10000: blocking,
  worst_at_10000: { family: worst.family, ms: worst.ms_10000 },
  over_target_at_10000: over.length ? over.join(', ') : 'none',
  meets_target: over.length === 0 && typical.p99_ms <= targetP99Ms,
  ...(baselinePath ? { baseline: baselinePath } : {}),
});
console.log(`wrote ${file}`);
