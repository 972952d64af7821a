// The plain-text fast path (src/markdown/plain-text.ts) against the full renderer: on generated text built mostly
// from the characters the fast path accepts, with near misses mixed in (domains, list markers, linkifier matches,
// emoticons, trailing spaces), whenever the fast path answers, its HTML is the full renderer's, and renderMarkdown
// gives the full renderer's result either way.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { renderPlainText } from '../../../src/markdown/plain-text.js';
import { emptySnapshot } from '../../../src/markdown/context-snapshot.js';
import { renderMarkdown, renderMarkdownAsync } from '../../../src/markdown/index.js';
import { INLINE_MAX_CHARS } from '../../../src/markdown/render-pool.js';
import { renderParsed } from '../../../src/markdown/render.js';
import type { RenderContext } from '../../../src/markdown/index.js';
import { testContext } from './fixtures.js';

// Messages are words with punctuation, joined mostly by single spaces, sometimes by line breaks or blank lines.
const words = [
  'a', 'word', 'Hello', 'ok', 'x', 'I', '7', '42', '2024', 'it\'s', 'a-b', 'x/y', '50%', '1+1=2', 'wait...', 'really?!',
  'yes,', 'done.', 'com', 'http', 'www', 'ZUL', 'me', 'me12', 'café', 'naïve', '日本語', 'Привет', 'ǅ', '\u{1D400}x',
];
// Accepted inside a line, not at its start (or, for "e.g.", not at all).
const punctuation = ['-', '--', '.', "'", '"', '=', '"quoted"', '+', '%', 'e.g.'];
const separators = [' ', ' ', ' ', ' ', ' ', ' ', '  ', '\n', '\n\n', '\n\n\n'];
const nearMisses = [
  'example.com', 'a.b', 'x.-y', '.5', '1.', '1. ', '12) ', '- ', '+ ', '* ', '= ', '===', '---', '> ', '#', '#12', ' #12', 'ZUL-12',
  ' ZUL-7', ':)', ' :)', ' :D', ' (:', ' <3', ';)', ':', '\t', '\r\n', ' \n', '\n ', '    ', '\u00e9', '\u{1F600}', 'é.com', '日本.中国', 'x.рф', '.é', '\u00a0', '\u0301', '\u{1F1E9}\u{1F1EA}', '٣', '\ud800', '@', '&', '<',
  '>', '_', '*', '~', '`', '$$', '[', ']', '(', ')', '|', '\\', '/me ', 'https://a.b', 'x@y.com', ' ', '\n',
];

const wordOf = fc.oneof({ arbitrary: fc.constantFrom(...words), weight: 20 }, { arbitrary: fc.constantFrom(...punctuation), weight: 1 });
const pairsOf = fc.array(fc.tuple(wordOf, fc.constantFrom(...separators)), { minLength: 1, maxLength: 30 });
// Half the messages get one near miss, in place of a word or of a separator, in text otherwise plain.
const nearMissOf = fc.option(fc.record({ at: fc.nat(), asWord: fc.boolean(), piece: fc.constantFrom(...nearMisses) }), { freq: 2 });
const messageOf = fc.tuple(pairsOf, nearMissOf, fc.constantFrom('', '', '\n', '\n\n', ' ')).map(([pairs, miss, tail]) => {
  if (miss) {
    const pair = pairs[miss.at % pairs.length]!;
    pair[miss.asWord ? 0 : 1] = miss.piece;
  }
  return pairs.map(([word, separator]) => word + separator).join('').trimEnd() + (miss ? '' : tail);
});

const contexts: Record<string, RenderContext> = {
  'test realm': testContext(),
  'emoticons translated': testContext({ translateEmoticons: true }),
  'no linkifiers': testContext({ linkifiers: [] }),
  'a linkifier on plain words': testContext({ linkifiers: [{ id: 9, pattern: 'me(?P<n>[0-9]+)', urlTemplate: 'https://e.example/{n}' }] }),
};

for (const [name, ctx] of Object.entries(contexts)) {
  t.test(`plain-text fast path equals the full renderer (${name})`, (t) => {
    let taken = 0;
    let runs = 0;
    fc.assert(
      fc.property(messageOf, (message) => {
        runs++;
        const full = renderParsed(message, ctx).result;
        const fast = renderPlainText(message, ctx);
        if (fast !== undefined) {
          taken++;
          if (fast !== full.html) return false;
        }
        return isDeepStrictEqual(renderMarkdown(message, ctx), full);
      }),
      { numRuns: 1_000, seed: 19 },
    );
    // The comparison means something only if the fast path answers for a good share of the inputs.
    t.ok(taken > runs / 4, `fast path taken for ${taken} of ${runs} inputs`);
    t.end();
  });
}

t.test('the fast path answers for plain text and leaves the rest to the parser', (t) => {
  const ctx = testContext();
  t.equal(renderPlainText('Hello there, see you at 5 pm!', ctx), '<p>Hello there, see you at 5 pm!</p>');
  t.equal(renderPlainText('Привет, café 日本語!', ctx), '<p>Привет, café 日本語!</p>');
  t.equal(renderPlainText('a\nb\n\n\nc', ctx), '<p>a<br>\nb</p>\n<p>c</p>');
  t.equal(renderPlainText('spaces kept  \nat line ends ', ctx), '<p>spaces kept  <br>\nat line ends </p>');
  t.equal(renderPlainText('a\n'.repeat(5_000), ctx), `<p>${Array(5_000).fill('a').join('<br>\n')}</p>`);
  for (const notPlain of ['see example.com', '1. first', '2024. Then', 'ZUL-12 is fixed', 'ok :)', 'see 日本.中国', 'ok \u{1F600}', 'a\n- b', 'a\n    b', '', '\nlate start']) {
    t.equal(renderPlainText(notPlain, ctx), undefined, JSON.stringify(notPlain));
  }
  t.end();
});

t.test('large plain text renders inline, not in the render pool', async (t) => {
  // The context and its snapshot disagree on purpose: a linkifier only the snapshot has shows which one rendered
  // (a worker renders from the snapshot).
  const linkifier = { id: 9, pattern: 'me(?P<n>[0-9]+)', urlTemplate: 'https://e.example/{n}' };
  const ctx = testContext({ linkifiers: [], snapshot: { ...emptySnapshot('http://zulip.testserver'), linkifiers: [linkifier] } });
  const content = `${'plain words '.repeat(100)}me12`;
  t.ok(content.length >= INLINE_MAX_CHARS);
  t.same(await renderMarkdownAsync(content, ctx), renderParsed(content, ctx).result);
});
