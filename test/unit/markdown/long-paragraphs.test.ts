// Long paragraphs of inline markup: `~~` pairs resolved in one pass (delimiter-runs.ts) give the tree GFM's
// resolver gives, and a paragraph of thousands of them renders; `*` patterns read line by line (emphasis.ts) give
// what each line gives alone, since no pattern crosses a line break.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import remarkParse from 'remark-parse';
import t from 'tap';
import { unified } from 'unified';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { remarkZulipSyntax } from '../../../src/markdown/parse.js';
import { adversarialFamilies } from '../../helpers/markdown-adversarial.js';
import { testContext } from './fixtures.js';

const ctx = testContext();
const html = (source: string): string => renderMarkdown(source, ctx).html;

const parsers = (tables: boolean) => ({
  onePass: unified().use(remarkParse).use(remarkZulipSyntax, { tables }).freeze(),
  gfm: unified().use(remarkParse).use(remarkZulipSyntax, { tables, oneStrikethroughPass: false }).freeze(),
});
const withTables = parsers(true);
const withoutTables = parsers(false);
const sameTree = (source: string): boolean =>
  [withTables, withoutTables].every(({ onePass, gfm }) => isDeepStrictEqual(onePass.parse(source), gfm.parse(source)));

const tildePieces = [
  '~~', '~', '~~~', '~~~~', 'a', 'bc', ' ', '\n', '\n\n', '[', ']', '](http://a.b/)', '`', '**', '*', '\\', '> ', '- ',
  '|', '|-|', '@**Iago**', ':smile:', '&amp;', '\t', 'é',
];

t.test('one-pass strikethrough gives the tree of GFM\'s resolver', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...tildePieces), { maxLength: 100 }), (parts) => sameTree(parts.join(''))),
    { numRuns: 3_000 },
  );
  for (const source of ['~~a~~', 'x ~~a~~ ~~b~~ y', '~~[a ~~b~~](http://a.b/)~~', '`~~a~~` ~~b~~', '~~a\nb~~ ~~c~~', '~~~a~~ ~~b~~~']) {
    t.ok(sameTree(source), JSON.stringify(source));
  }
  t.ok(sameTree(adversarialFamilies['strikethrough pairs']!(2_000)), 'strikethrough pairs, 2,000 characters');
  t.ok(sameTree('~~a~~ b\n'.repeat(250)), '250 lines with a pair each');
});

t.test('a paragraph of thousands of pairs renders, every pair struck', async (t) => {
  const lines = 1_250;
  const out = html('~~a~~ b\n'.repeat(lines).trimEnd());
  t.equal(out.match(/<del>a<\/del> b/g)?.length, lines);
  t.notMatch(out, /~/);
  // Runs that do not pair stay text, however many.
  const unpaired = html('~~~a '.repeat(2_000));
  t.equal(unpaired.match(/~~~a/g)?.length, 2_000);
  t.notMatch(unpaired, /<del>/);
});

// Lines that start and end with a letter, so no line is a list item, a rule or a hard break.
const starLine = fc.array(fc.constantFrom('*', '**', '***', 'a', 'b c', '^', ' ', ' *', '* '), { maxLength: 14 }).map((parts) => `x${parts.join('')}x`);
const paragraphInner = (source: string): string => html(source).replace(/^<p>/, '').replace(/<\/p>$/, '');

t.test('* patterns read each line apart', async (t) => {
  fc.assert(
    fc.property(fc.array(starLine, { minLength: 1, maxLength: 12 }), (lines) =>
      paragraphInner(lines.join('\n')) === lines.map(paragraphInner).join('<br>\n'),
    ),
    { numRuns: 1_500 },
  );
  const line = 'x *a* **b** ***c*** d *e x';
  const many = Array.from({ length: 1_000 }, () => line);
  t.equal(paragraphInner(many.join('\n')), many.map(paragraphInner).join('<br>\n'), '1,000 lines of the same markup');
  t.equal(paragraphInner(line), 'x <em>a</em> <strong>b</strong> <strong><em>c</em></strong> d *e x');
});
