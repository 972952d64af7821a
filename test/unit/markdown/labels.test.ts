// Merging the data that unmatched brackets leave (labels.ts) changes no tree: the parser with it gives the same
// mdast, text values and positions included, as the one with micromark's own label constructs, on random
// inputs made of brackets, links, images, code spans and Zulip's atoms, and on a few shapes written out.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import remarkParse from 'remark-parse';
import t from 'tap';
import { unified } from 'unified';
import type { Event, Token } from 'micromark-util-types';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { mergeAdjacentData } from '../../../src/markdown/labels.js';
import { remarkZulipSyntax } from '../../../src/markdown/parse.js';
import { adversarialFamilies } from '../../helpers/markdown-adversarial.js';
import { testContext } from './fixtures.js';

const parsers = (tables: boolean) => ({
  merged: unified().use(remarkParse).use(remarkZulipSyntax, { tables }).freeze(),
  core: unified().use(remarkParse).use(remarkZulipSyntax, { tables, mergeLabelData: false }).freeze(),
});
const withTables = parsers(true);
const withoutTables = parsers(false);
const sameTree = (source: string): boolean =>
  [withTables, withoutTables].every(({ merged, core }) => isDeepStrictEqual(merged.parse(source), core.parse(source)));

const pieces = [
  '[', ']', '![', '(', ')', '](http://a.b/)', '[a](', '`', '``', '*', '**', '~~', '_', '\\', 'a', 'bc', ' ', '  ',
  '\n', '\n\n', '> ', '- ', '|', '|-|', '@**Iago**', ':smile:', 'http://a.b/c', '&amp;', '"', 'é', '\t',
];

t.test('the merged parser gives the tree of micromark\'s label constructs', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 120 }), (parts) => sameTree(parts.join(''))),
    { numRuns: 2_000 },
  );
  for (const name of ['bracket pairs', 'open brackets', 'unclosed links', 'nested images', 'links', 'backtick runs']) {
    t.ok(sameTree(adversarialFamilies[name]!(2_000)), name);
  }
});

const ctx = testContext();
const shapes: Record<string, [source: string, html: string]> = {
  'a link inside brackets': ['[a [b](http://a.b/) c]', '<p>[a <a href="http://a.b/">b</a> c]</p>'],
  'unmatched brackets': ['a ] b [c', '<p>a ] b [c</p>'],
  'nested empty brackets': ['[[]][!', '<p>[[]][!</p>'],
  'a reference stays text': ['[a][b] and [c][]', '<p>[a][b] and [c][]</p>'],
  'brackets before line ends': ['x [ \ny ![  \nz', '<p>x [ <br>\ny ![  <br>\nz</p>'],
  'a code span in a label': ['[`a]` b](http://a.b/)', '<p><a href="http://a.b/"><code>a]</code> b</a></p>'],
  'a refused link beside a link': [
    '[a *b* ](http://a.b/) [x](javascript:alert(1))',
    '<p><a href="http://a.b/">a <em>b</em> </a> [x](javascript:alert(1))</p>',
  ],
};

t.test('shapes', async (t) => {
  for (const [name, [source, html]] of Object.entries(shapes)) {
    t.ok(sameTree(source), `${name}: same tree`);
    t.equal(renderMarkdown(source, ctx).html, html, name);
  }
  t.ok(sameTree('![x](http://a.b/i.png) y'), 'an image: same tree');
  const image = renderMarkdown('![x](http://a.b/i.png) y', ctx).html;
  t.match(image, /^<p><a href="http:\/\/a\.b\/i\.png">x<\/a> y<\/p>\n<div class="message_inline_image">/, 'an image');
});

t.test('mergeAdjacentData keeps each run\'s first pair, stretched to the run\'s end', async (t) => {
  const point = (offset: number) => ({ line: 1, column: offset + 1, offset, _index: 0, _bufferIndex: offset });
  const token = (type: string, from: number, to: number): Token => ({ type, start: point(from), end: point(to) }) as Token;
  const pair = (tok: Token): Event[] => [['enter', tok, undefined!], ['exit', tok, undefined!]];
  const [a, b, c, line, d] = [token('data', 0, 1), token('data', 1, 2), token('data', 2, 4), token('lineEnding', 4, 5), token('data', 5, 6)];
  const events = mergeAdjacentData([...pair(a!), ...pair(b!), ...pair(c!), ...pair(line!), ...pair(d!)]);
  t.same(events.map(([kind, tok]) => [kind, tok.type, tok.start.offset, tok.end.offset]), [
    ['enter', 'data', 0, 4],
    ['exit', 'data', 0, 4],
    ['enter', 'lineEnding', 4, 5],
    ['exit', 'lineEnding', 4, 5],
    ['enter', 'data', 5, 6],
    ['exit', 'data', 5, 6],
  ]);
});
