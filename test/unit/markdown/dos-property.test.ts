// Rendering never fails with anything but the real server's "Unable to render message", and its time grows at
// most linearly with the input for the adversarial families (issue 24 item 1).
import fc from 'fast-check';
import t from 'tap';
import { MarkdownRenderingError, renderMarkdown } from '../../../src/markdown/index.js';
import { adversarialFamilies, soupPieces } from '../../helpers/markdown-adversarial.js';
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

/** The fastest of a few runs: the machine is shared, the minimum is the cost of the input itself. */
function fastest(content: string, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    render(content);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

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

t.test('time grows at most linearly for adversarial families', async (t) => {
  for (const [name, family] of Object.entries(adversarialFamilies)) {
    render(family(1_250));
    const small = fastest(family(1_250));
    const large = fastest(family(10_000));
    // 8x the input: linear is 8x, quadratic 64x; allow 3x on top of linear for noise on a shared machine,
    // plus a fixed 100 ms floor.
    t.ok(large <= small * 8 * 3 + 100, `${name}: ${small.toFixed(1)} ms at 1,250 chars, ${large.toFixed(1)} ms at 10,000`);
  }
});
