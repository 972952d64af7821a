// A long table parsed in groups of rows (long-tables.ts) gives exactly the tree of a single parse, positions
// included, and so the same HTML; where a part would not come out as table rows, it falls back to one parse.
// Plain rows built without parsing give the same tree and HTML as parsing them, on random tables whose cells mix
// plain text with Markdown, mentions, emoji, URLs, linkifier matches and GFM's odd rows.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import remarkParse from 'remark-parse';
import t from 'tap';
import { unified } from 'unified';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { parseSplittingLongTables, ROW_GROUP_CHARS } from '../../../src/markdown/long-tables.js';
import { remarkZulipSyntax } from '../../../src/markdown/parse.js';
import { renderParsed } from '../../../src/markdown/render.js';
import type { MdNode } from '../../../src/markdown/tree.js';
import { adversarialFamilies } from '../../helpers/markdown-adversarial.js';
import { testContext } from './fixtures.js';

const parser = unified().use(remarkParse).use(remarkZulipSyntax).freeze();
let parses = 0;
let parsedChars = 0;
const parse = (source: string): MdNode => {
  parses++;
  parsedChars += source.length;
  return parser.parse(source) as unknown as MdNode;
};

const row = (i: number): string => `| r${i} *em* \\| @**Iago** | \`a|b\` \`c  d\` [l](http://a.b/${i}) :smile: |`;
const rows = (n: number): string => Array.from({ length: n }, (_, i) => row(i)).join('\n');
const many = Math.ceil((4 * ROW_GROUP_CHARS) / row(0).length);

const split: Record<string, string> = {
  'the benchmark family': adversarialFamilies['table rows']!(10_000),
  'between paragraphs, rows without a pipe after it': `intro\n\n| a | b |\n|:-|-:|\n${rows(many)}\nlazy line\n\nafter **x** http://c.d/`,
  'two long tables': `| a | b |\n|-|-|\n${rows(many)}\n\n| c |\n|---|\n${rows(many)}`,
  'no final line ending': `| a | b |\n| --- | --- |\n${rows(many)}`,
  'a final line ending': `| a | b |\n| --- | --- |\n${rows(many)}\n`,
  'after a list': `- item\n\n| a | b |\n|-|-|\n${rows(many)}\n- next`,
  'odd rows among them': `| a | b |\n|-|-|\n${rows(many)}\n|\n||\n| |\n|x\n${rows(many)}`,
};
const single: Record<string, string> = {
  'after a fence': `\`\`\`\nx\n\`\`\`\n\n| a | b |\n|-|-|\n${rows(many)}`,
  'lazy in a quote': `> q\n| a | b |\n|-|-|\n${rows(many)}`,
  'inside a fence': `\`\`\`\n| a | b |\n|-|-|\n${rows(many)}\n\`\`\``,
};

t.test('a long table parsed in groups is the tree of one parse', async (t) => {
  for (const [name, source] of Object.entries(split)) {
    parses = 0;
    const tree = parseSplittingLongTables(parse, source, { fastRows: false });
    t.ok(parses > 2, `${name}: parsed in groups`);
    t.same(tree, parse(source), name);
  }
});

t.test('a table that may not be one is parsed whole', async (t) => {
  for (const [name, source] of Object.entries(single)) {
    parses = 0;
    const tree = parseSplittingLongTables(parse, source);
    t.equal(parses, 1, `${name}: one parse`);
    t.same(tree, parse(source), name);
  }
});

t.test('a delimiter row that does not fit the header falls back to one parse', async (t) => {
  const source = `| a | b |\n|-|-|-|\n${rows(many)}`;
  t.same(parseSplittingLongTables(parse, source), parse(source));
});

t.test('a long table renders as a table of all its rows', async (t) => {
  const html = renderMarkdown(`| a | b |\n|-|-|\n${rows(many)}`, testContext()).html;
  t.equal(html.match(/<tr>/g)?.length, many + 1);
  t.equal(html.match(/<table>/g)?.length, 1);
  t.match(html, /<td>r0 <em>em<\/em> .*<span class="user-mention" data-user-id="11">@Iago<\/span><\/td>/);
});

t.test('every long table of a message is split, not only the first', async (t) => {
  const table = `| a | b |\n|-|-|\n${rows(many)}`;
  parses = 0;
  parseSplittingLongTables(parse, table);
  const groupsOfOne = parses - 1;
  parses = 0;
  const source = `${table}\n\ntext between\n\n${table}`;
  t.same(parseSplittingLongTables(parse, source), parse(source));
  // The main parse and both tables' groups, then the check's own parse.
  t.equal(parses, 1 + 2 * groupsOfOne + 1);
});

// Cells are made of these: plain text (which rows are built from without parsing), and what makes a row parsed.
const plainPieces = [
  'a', 'word', 'Hello', '42', '2024', '1.', ' ', ' ', '  ', '.', ',', '!', '?', "'", '"', '-', '---', '/', '%', '+', '=', 'é', '日本語',
  '\u{1D400}', 'ZUL-12', 'me7', 'example.com',
];
const otherPieces = [
  '*', '**', '*em*', '_', '`', '`a|b`', '\\', '\\|', ':smile:', '@**Iago**', '#**Denmark**', 'http://a.b/c', '[l](http://a.b/)', '&amp;',
  '\t', '~~', '$$x$$', '#12', '<', '>', ':', ':)', '😀', '\u00a0', '![', ']',
];
const cellOf = fc
  .array(fc.oneof({ arbitrary: fc.constantFrom(...plainPieces), weight: 30 }, { arbitrary: fc.constantFrom(...otherPieces), weight: 1 }), { maxLength: 4 })
  .map((pieces) => pieces.join(''));
// Any number of cells, against the header's: GFM keeps the extra ones in the tree and drops them in HTML.
const rowOf = fc
  .tuple(fc.array(cellOf, { maxLength: 5 }), fc.constantFrom('|', '|', '|', '', '|  ', ' ', '| ', '||'))
  .map(([cells, end]) => `|${cells.join('|')}${end}`);
const alignments = ['-', ':-', '-:', ':-:', ' --- ', ':---:', ' :- '];
const tableOf = fc
  .tuple(fc.array(fc.constantFrom(...alignments), { minLength: 1, maxLength: 4 }), fc.array(rowOf, { minLength: 120, maxLength: 250 }), fc.constantFrom('', '\n', '\n\nafter'))
  .map(([align, body, tail]) => `|${align.map((_, i) => ` h${i} `).join('|')}|\n|${align.join('|')}|\n${body.join('\n')}${tail}`);

// The test realm's linkifiers (`ZUL-12` matches one) and one more on plain words.
const ctx = testContext({ linkifiers: [...testContext().linkifiers, { id: 9, pattern: 'me(?P<n>[0-9]+)', urlTemplate: 'https://e.example/{n}' }] });

t.test('plain rows built without parsing are the rows a parse gives', (t) => {
  let fastChars = 0;
  let slowChars = 0;
  fc.assert(
    fc.property(tableOf, (source) => {
      parsedChars = 0;
      const fast = parseSplittingLongTables(parse, source);
      fastChars += parsedChars;
      parsedChars = 0;
      const slow = parseSplittingLongTables(parse, source, { fastRows: false });
      slowChars += parsedChars;
      return isDeepStrictEqual(fast, slow) && isDeepStrictEqual(fast, parse(source));
    }),
    { numRuns: 100, seed: 19 },
  );
  t.pass('100 random tables');
  // The comparison means something only if many rows were built rather than parsed.
  t.ok(fastChars < slowChars / 2, `characters parsed: ${fastChars} with plain rows built, ${slowChars} without`);
  t.end();
});

t.test('a long table renders the same with its plain rows built as with them parsed', (t) => {
  fc.assert(
    fc.property(tableOf, (source) =>
      isDeepStrictEqual(renderParsed(source, ctx).result, renderParsed(source, ctx, { fastRows: false }).result),
    ),
    { numRuns: 30, seed: 19 },
  );
  t.pass('30 random tables');
  t.end();
});

t.test('a table of plain rows is parsed once, with GFM rows and alignment as parsing gives them', async (t) => {
  const odd = ['|x|', '|x|y|z|w|', '| |  |', '|x|y', '|x|y|  ', '||', '|  x  y  |', '| | |', '|x| y |z', '|.|!|'];
  const source = `| a | b | c |\n|:-|-:|:-:|\n${Array.from({ length: many * 4 }, (_, i) => odd[i % odd.length]).join('\n')}\n`;
  for (const [name, text] of Object.entries({ 'GFM rows': source, 'the benchmark family': adversarialFamilies['table rows']!(10_000) })) {
    parses = 0;
    const tree = parseSplittingLongTables(parse, text);
    t.equal(parses, 1, `${name}: only the main document is parsed`);
    t.strictSame(tree, parse(text), name);
    t.strictSame(renderParsed(text, ctx).result, renderParsed(text, ctx, { fastRows: false }).result, name);
  }
  const html = renderParsed(source, ctx).result.html;
  t.match(html, '<tr>\n<td align="left">x</td>\n<td align="right"></td>\n<td align="center"></td>\n</tr>', 'missing cells are empty');
  t.match(html, '<tr>\n<td align="left">x</td>\n<td align="right">y</td>\n<td align="center">z</td>\n</tr>', 'extra cells are dropped');
  t.match(html, '<td align="left">x  y</td>', 'spaces inside a cell are kept');
});

t.test('plain rows built without parsing get the realm linkifiers like parsed ones', async (t) => {
  const source = `| issue | note |\n|-|-|\n${'| ZUL-12 | me7 and example.com |\n'.repeat(many * 2)}`;
  parses = 0;
  parseSplittingLongTables(parse, source);
  t.equal(parses, 1, 'rows built, not parsed');
  const fast = renderParsed(source, ctx);
  t.strictSame(fast.result, renderParsed(source, ctx, { fastRows: false }).result);
  t.match(fast.result.html, '<td><a href="https://zulip.example.com/issues/12">ZUL-12</a></td>\n<td><a href="https://e.example/7">me7</a> and <a href="http://example.com">example.com</a></td>');
  t.ok(fast.result.hasLink);
});
