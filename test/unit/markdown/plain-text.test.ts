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

// Messages of lines, each a sentence of the above or a list item holding one ('-', '*', '+', numbers and near misses
// of them), joined by line breaks or blank lines: paragraphs and lists next to each other in every order.
const markerOf = fc.oneof(
  { arbitrary: fc.constantFrom('- ', '* ', '+ ', '1. ', '1. ', '2. ', '7. ', '10. ', '0. ', '123456789. '), weight: 14 },
  { arbitrary: fc.constantFrom('-  ', '-', '- - ', '  - ', '-\t', '— ', '01. ', '1.  ', '1) ', '1.', '1234567890. ', '1. 2. '), weight: 1 },
);
const lineOf = fc.tuple(fc.option(markerOf, { freq: 2 }), pairsOf).map(([marker, pairs]) => {
  const sentence = pairs.map(([word, separator]) => word + separator.replace(/\n+/g, ' ')).join('').trimEnd();
  return (marker ?? '') + sentence;
});
const linesMessageOf = fc.tuple(fc.array(fc.tuple(lineOf, fc.constantFrom('\n', '\n', '\n', '\n\n', '\n\n\n')), { minLength: 1, maxLength: 6 }), nearMissOf).map(([lines, miss]) => {
  if (miss) lines[miss.at % lines.length]![miss.asWord ? 0 : 1] += miss.piece;
  return lines.map(([line, separator]) => line + separator).join('').trimEnd();
});

// Tables (a header, a delimiter row, body rows of any length) with cells of words, empty cells and near misses,
// between paragraphs and lists.
const cellOf = fc.oneof(
  { arbitrary: pairsOf.map((pairs) => pairs.slice(0, 3).map(([word]) => word).join(' ')), weight: 20 },
  { arbitrary: fc.constantFrom('', ' ', '  x  '), weight: 3 },
  { arbitrary: fc.constantFrom('\\|', '`a|b`', ':-', '-', 'a\tb', '*a*', 'me12', 'example.com'), weight: 1 },
);
const delimiterOf = fc.oneof(
  { arbitrary: fc.constantFrom('-', '---', ' - ', ':-', '-:', ':-:', ' :--: '), weight: 10 },
  { arbitrary: fc.constantFrom('', ':', '-x', '=', '- -'), weight: 1 },
);
const rowText = (cells: string[], edges: string) => (edges[0] === '|' ? '|' : '') + cells.join('|') + (edges[1] === '|' ? '|' : '');
const headerCellOf = fc.oneof({ arbitrary: fc.constantFrom(...words), weight: 12 }, { arbitrary: cellOf, weight: 1 });
const tableOf = fc.integer({ min: 1, max: 4 }).chain((width) => fc.tuple(
  fc.array(headerCellOf, { minLength: width, maxLength: width }),
  fc.array(delimiterOf, { minLength: width, maxLength: width }),
  fc.array(fc.array(cellOf, { minLength: Math.max(0, width - 1), maxLength: width + 1 }), { maxLength: 5 }),
  fc.oneof({ arbitrary: fc.constant('||'), weight: 12 }, { arbitrary: fc.constantFrom('|', ' |', '| ', '|  '), weight: 1 }),
).map(([header, delimiters, rows, edges]) => [header, delimiters, ...rows].map((cells) => rowText(cells, edges)).join('\n')));
const tablesMessageOf = fc.tuple(fc.array(fc.tuple(fc.oneof({ arbitrary: tableOf, weight: 3 }, { arbitrary: lineOf, weight: 2 }), fc.constantFrom('\n', '\n\n', '\n\n')), { minLength: 1, maxLength: 4 }), fc.constantFrom('', '', '\n'))
  .map(([blocks, tail]) => blocks.map(([block, separator]) => block + separator).join('').trimEnd() + tail);

const contexts: Record<string, RenderContext> = {
  'test realm': testContext(),
  'emoticons translated': testContext({ translateEmoticons: true }),
  'no linkifiers': testContext({ linkifiers: [] }),
  'a linkifier on plain words': testContext({ linkifiers: [{ id: 9, pattern: 'me(?P<n>[0-9]+)', urlTemplate: 'https://e.example/{n}' }] }),
};

// Each generator with the share of its inputs the fast path must answer for (with a list, for the second), for
// the comparison to mean something.
const generators = [
  { kind: 'words and lines', messages: messageOf, share: 1 / 4, what: 'any', counts: (html: string) => html !== '' },
  { kind: 'paragraphs and lists', messages: linesMessageOf, share: 1 / 15, what: 'with a list', counts: (html: string) => /<[ou]l/.test(html) },
  { kind: 'tables', messages: tablesMessageOf, share: 1 / 15, what: 'with a table', counts: (html: string) => html.includes('<table>') },
];
for (const [name, ctx] of Object.entries(contexts)) for (const { kind, messages, share, what, counts } of generators) {
  t.test(`plain-text fast path equals the full renderer (${name}; ${kind})`, (t) => {
    let taken = 0;
    let runs = 0;
    fc.assert(
      fc.property(messages, (message) => {
        runs++;
        const full = renderParsed(message, ctx).result;
        const fast = renderPlainText(message, ctx);
        if (fast !== undefined) {
          if (counts(fast)) taken++;
          if (fast !== full.html) return false;
        }
        return isDeepStrictEqual(renderMarkdown(message, ctx), full);
      }),
      { numRuns: 1_000, seed: 19 },
    );
    t.ok(taken > runs * share, `fast path taken for ${taken} of ${runs} inputs (${what})`);
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
  t.equal(renderPlainText('- a\n* b\n+ c d  ', ctx), '<ul>\n<li>a</li>\n<li>b</li>\n<li>c d  </li>\n</ul>');
  t.equal(renderPlainText('To do\n- a\n- b\n\nDone', ctx), '<p>To do</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<p>Done</p>');
  t.equal(renderPlainText('- a\n'.repeat(2_500), ctx), `<ul>\n${Array(2_500).fill('<li>a</li>').join('\n')}\n</ul>`);
  t.equal(renderPlainText('3. a\n1. b\n- c', ctx), '<ol start="3">\n<li>a</li>\n<li>b</li>\n</ol>\n<ul>\n<li>c</li>\n</ul>');
  t.equal(renderPlainText('1. a\n2. b', ctx), '<ol>\n<li>a</li>\n<li>b</li>\n</ol>');
  t.equal(renderPlainText('2024. Then', ctx), '<ol start="2024">\n<li>Then</li>\n</ol>');
  t.equal(
    renderPlainText('| a | b |\n| :- | -: |\n| x | y |\n|z|\n\nafter', ctx),
    '<table>\n<thead>\n<tr>\n<th align="left">a</th>\n<th align="right">b</th>\n</tr>\n</thead>\n<tbody>\n'
      + '<tr>\n<td align="left">x</td>\n<td align="right">y</td>\n</tr>\n<tr>\n<td align="left">z</td>\n<td align="right"></td>\n</tr>\n</tbody>\n</table>\n<p>after</p>',
  );
  t.equal(renderPlainText('|a|\n|:-:|', ctx), '<table>\n<thead>\n<tr>\n<th align="center">a</th>\n</tr>\n</thead>\n</table>');
  for (const notPlain of ['see example.com', 'ZUL-12 is fixed', 'ok :)', 'see 日本.中国', 'ok \u{1F600}', 'a\n    b', '', '\nlate start', '- a\nb', '- a\n\n- b', '-  a', '- - -', '- 1. a', '- a\n  - b', '- see example.com', '01. a', '1. a\n\n2. b', '1) a', '1234567890. a', 'a\n10. b', '- a\n10. b', '|a|\n|-|\n|`x`|', '|a|b|\n|-|', 'a\n|a|\n|-|', '|a|\n|-|\nb', '||\n|-|']) {
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
