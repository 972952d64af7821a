// A long table parsed in groups of rows (long-tables.ts) gives exactly the tree of a single parse, positions
// included, and so the same HTML; where a part would not come out as table rows, it falls back to one parse.
import remarkParse from 'remark-parse';
import t from 'tap';
import { unified } from 'unified';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { parseSplittingLongTables, ROW_GROUP_CHARS } from '../../../src/markdown/long-tables.js';
import { remarkZulipSyntax } from '../../../src/markdown/parse.js';
import type { MdNode } from '../../../src/markdown/tree.js';
import { adversarialFamilies } from '../../helpers/markdown-adversarial.js';
import { testContext } from './fixtures.js';

const parser = unified().use(remarkParse).use(remarkZulipSyntax).freeze();
let parses = 0;
const parse = (source: string): MdNode => {
  parses++;
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
    const tree = parseSplittingLongTables(parse, source);
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
