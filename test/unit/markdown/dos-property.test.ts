// Rendering never fails with anything but the real server's "Unable to render message", its time grows at most
// linearly with the input for the adversarial families, and no input takes more than a bound for its size
// (issue 24 item 1; the bound is ten times issue 19's target, so that a loaded machine does not fail it).
import fc from 'fast-check';
import t from 'tap';
import { MarkdownRenderingError, renderMarkdown } from '../../../src/markdown/index.js';
import { renderParsed } from '../../../src/markdown/render.js';
import { adversarialFamilies, repeatedNestedLists, soupPieces } from '../../helpers/markdown-adversarial.js';
import { testContext } from './fixtures.js';

const ctx = testContext();

function render(content: string): string | MarkdownRenderingError {
  try {
    return renderMarkdown(content, ctx).html;
  } catch (error) {
    if (error instanceof MarkdownRenderingError) return error;
    throw error;
  }
}

/**
 * The cost of rendering `content`: the best of a few runs, each the smaller of its CPU time and its wall time
 * (preemption on a shared machine inflates wall time, parallel GC threads inflate CPU time; neither shrinks
 * the work the input itself takes).
 */
function cost(content: string, runs = 3, renderOnce: (content: string) => unknown = render): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    renderOnce(content);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpuStart);
    best = Math.min(best, wall, (used.user + used.system) / 1000);
  }
  return best;
}

/** The target (issues 19 and 24): no input of up to 10,000 characters over 50 ms on one idle core. */
const TARGET_MS = 50;
/**
 * What the test allows for an input of `size` characters: ten times the target, scaled linearly with the size
 * (never below a quarter of the 10,000-character bound), so a loaded CI machine passes and a superlinear spot,
 * or a constant factor of ten, does not.
 */
const allowedMs = (size: number): number => 10 * TARGET_MS * (Math.max(size, 2_500) / 10_000);
/**
 * From 1,000 to 10,000 characters linear growth is 10x; allowed is 3x that, plus 20 ms for timer and GC noise
 * on inputs that cost almost nothing. Quadratic growth is 100x.
 */
const allowedGrowth = (small: number): number => small * 10 * 3 + 20;

/** cost() of one render by the full renderer, never its plain-text shortcut (a paragraph of plain words would take that). */
const parsedCost = (content: string): number => cost(content, 1, (input) => renderParsed(input, ctx));

t.test('rendering never throws anything but MarkdownRenderingError', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...soupPieces), { maxLength: 400 }), (parts) => {
      render(parts.join(''));
    }),
    { numRuns: 300 },
  );
  for (const [name, family] of Object.entries(adversarialFamilies)) {
    t.doesNotThrow(() => render(family(10_000)), name);
  }
});

t.test('time grows at most linearly for adversarial families, within a bound per input size', async (t) => {
  for (const [name, family] of Object.entries(adversarialFamilies)) {
    render(family(1_000));
    render(family(10_000));
    const small = cost(family(1_000));
    // The best of more runs for the larger input: on a loaded machine one run in three can still meet a GC pause
    // or a preemption, and a cheap small input leaves the growth bound little room for that.
    const large = cost(family(10_000), 6);
    const sizes = `${small.toFixed(1)} ms at 1,000 chars, ${large.toFixed(1)} ms at 10,000`;
    t.ok(small <= allowedMs(1_000), `${name}: ${sizes}; at most ${allowedMs(1_000)} ms at 1,000`);
    t.ok(large <= allowedMs(10_000), `${name}: ${sizes}; at most ${allowedMs(10_000)} ms at 10,000`);
    t.ok(large <= allowedGrowth(small), `${name}: ${sizes}; growth at most ${allowedGrowth(small).toFixed(1)} ms`);
  }
});

t.test('repeated nested lists render in linear time (micromark EditMap fix)', async (t) => {
  // Before the fix the parse was quadratic: 16,000 characters took seconds, 32,000 about four times that.
  render(repeatedNestedLists(4_000));
  const small = cost(repeatedNestedLists(4_000));
  const large = cost(repeatedNestedLists(32_000), 2);
  const sizes = `${small.toFixed(1)} ms at 4,000 chars, ${large.toFixed(1)} ms at 32,000`;
  // Linear growth is 8x (less once warm); allowed is 2.5x that plus 20 ms of noise. Quadratic growth is 64x.
  t.ok(large <= small * 20 + 20, `${sizes}; growth at most ${(small * 20 + 20).toFixed(1)} ms`);
});

t.test('a paragraph of many lines of * and ~~ markup renders in linear time', async (t) => {
  // Each match used to rebuild the whole paragraph (emphasis.ts) or splice all its events (GFM's ~~ resolver):
  // quadratic. Each shape is timed against a paragraph of as many lines of plain words, through the same parser
  // and measured in turn with it, so a loaded machine slows both: linear renders took 1.4x to 5.2x the plain
  // paragraph's time at 2,400 lines, the quadratic ones 10x-14x ("*a* b", 1.2 s) to past the render deadline;
  // at twice the lines the quadratic ratios double and the linear ones stay.
  const count = 4_800;
  const plain = 'a b\n'.repeat(count);
  for (const line of ['*a* b', '**a** *b* c', '~~a~~ b', 'x ~~a~~ *b* **c**']) {
    const marked = `${line}\n`.repeat(count);
    parsedCost(plain);
    parsedCost(marked);
    let plainMs = Infinity;
    let markedMs = Infinity;
    for (let run = 0; run < 2; run++) {
      plainMs = Math.min(plainMs, parsedCost(plain));
      markedMs = Math.min(markedMs, parsedCost(marked));
    }
    const bound = plainMs * 10 + 20;
    t.ok(markedMs <= bound, `${JSON.stringify(line)}: ${markedMs.toFixed(1)} ms, plain lines ${plainMs.toFixed(1)} ms; at most ${bound.toFixed(1)} ms`);
  }
});

t.test('random inputs stay within the bound for their size', async (t) => {
  // Soups of 1,000 to 10,000 characters: each one rendered within the bound for its length.
  let worst = { ratio: 0, size: 0, ms: 0 };
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...soupPieces), { minLength: 300, maxLength: 4_000 }), fc.integer({ min: 1_000, max: 10_000 }), (parts, size) => {
      const input = parts.join('').repeat(4).slice(0, size);
      render(input);
      const ms = cost(input, 2);
      if (ms / allowedMs(input.length) > worst.ratio) worst = { ratio: ms / allowedMs(input.length), size: input.length, ms };
      return ms <= allowedMs(input.length);
    }),
    { numRuns: 25 },
  );
  t.pass(`worst: ${worst.ms.toFixed(1)} ms for ${worst.size} chars (${(worst.ratio * 100).toFixed(0)}% of its bound)`);
});
