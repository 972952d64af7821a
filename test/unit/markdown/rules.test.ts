// The real server's Markdown rules, one family at a time (Python-Markdown with Zulip's processors). Each
// expectation follows from the rule as the real server states it (its patterns and processors), not from a
// copied output; the fixture cases in conformance.test.ts check the same rules on the real server's own HTML.
import t from 'tap';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { testContext } from './fixtures.js';

const ctx = testContext();
const html = (content: string): string => renderMarkdown(content, ctx).html;

t.test('code-block languages are named as Pygments names them', async (t) => {
  const language = (tag: string): string | undefined =>
    /data-code-language="([^"]*)"/.exec(html('```' + tag + '\nx = 1\n```'))?.[1];
  // Aliases map to the lexer's canonical name, case-insensitively.
  t.equal(language('py'), 'Python');
  t.equal(language('python3'), 'Python');
  t.equal(language('PY'), 'Python');
  t.equal(language('py2'), 'Python 2.x');
  t.equal(language('js'), 'JavaScript');
  t.equal(language('c++'), 'C++');
  t.equal(language('latex'), 'TeX');
  t.equal(language('text'), 'Text only');
  t.equal(language('js+php'), 'JavaScript+PHP');
  // A language Pygments does not know keeps the user's own text.
  t.equal(language('inventedlanguage'), 'inventedlanguage');
  t.equal(language('MyDSL'), 'MyDSL');
  // No language, no attribute.
  t.notMatch(html('```\nx\n```'), /data-code-language/);
});

t.test('global times may name their zone by abbreviation', async (t) => {
  const datetime = (body: string): string | undefined => /datetime="([^"]*)"/.exec(html(`<time:${body}>`))?.[1];
  // IST is India (+05:30) on the real server.
  t.equal(datetime('31 Dec 2017 5:30 am IST'), '2017-12-31T00:00:00Z');
  t.equal(datetime('Jun 5th 2017, 10:30PM PDT'), '2017-06-06T05:30:00Z');
  t.equal(datetime('2017-12-31 05:30 EST'), '2017-12-31T10:30:00Z');
  t.equal(datetime('2017-12-31 05:30 NZDT'), '2017-12-30T16:30:00Z');
  t.equal(datetime('2017-12-31 05:30 CEST'), '2017-12-31T03:30:00Z');
  t.equal(datetime('2017-12-31 05:30 UTC'), '2017-12-31T05:30:00Z');
  // An upper-case word the date parser does not know as a zone is ignored: the time is UTC.
  t.equal(datetime('2017-12-31 05:30 XYZ'), '2017-12-31T05:30:00Z');
  // The text shown is what the user wrote.
  t.equal(html('<time:31 Dec 2017 5:30 am IST>'), '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017 5:30 am IST</time></p>');
});

t.test('*** makes strong around emphasis', async (t) => {
  t.equal(html('***foo***'), '<p><strong><em>foo</em></strong></p>');
  t.equal(html('a ***b c*** d'), '<p>a <strong><em>b c</em></strong> d</p>');
  t.equal(html('**bold** and *em*'), '<p><strong>bold</strong> and <em>em</em></p>');
});

t.test('~~ strikes through the shortest tilde-free text between two runs of exactly two', async (t) => {
  t.equal(html('~~ like software ~~'), '<p><del> like software </del></p>');
  t.equal(html('x~~a~~y'), '<p>x<del>a</del>y</p>');
  t.equal(html('~~ a ~~ b ~~ c ~~'), '<p><del> a </del> b <del> c </del></p>');
  t.equal(html('~~**x** y~~'), '<p><del><strong>x</strong> y</del></p>');
  // Runs of three or more tildes never pair; nor does text holding a tilde or a line break.
  t.equal(html('~~~a~~~'), '<p>~~~a~~~</p>');
  t.equal(html('~~a~~~~b~~'), '<p>~~a~~~~b~~</p>');
  t.equal(html('~~a~b~~'), '<p>~~a~b~~</p>');
  t.equal(html('~~a\nb~~'), '<p>~~a<br>\nb~~</p>');
  t.equal(html('a ~~ b'), '<p>a ~~ b</p>');
  t.equal(html('`~~a~~`'), '<p><code>~~a~~</code></p>');
});

t.test('a quote needs text after its > marker', async (t) => {
  t.equal(html('>'), '<p>&gt;</p>');
  t.equal(html('>\n>'), '<p>&gt;<br>\n&gt;</p>');
  t.equal(html('  >'), '<p>&gt;</p>');
  // Bare markers under a paragraph continue it.
  t.equal(html('text\n>'), '<p>text<br>\n&gt;</p>');
  t.equal(html('a\n\n>'), '<p>a</p>\n<p>&gt;</p>');
  // Each > with more after it opens a quote; the last bare one is text.
  t.equal(html('>>>>>'), '<blockquote>\n<blockquote>\n<blockquote>\n<blockquote>\n<p>&gt;</p>\n</blockquote>\n</blockquote>\n</blockquote>\n</blockquote>');
  t.equal(html('> >'), '<blockquote>\n<p>&gt;</p>\n</blockquote>');
  // A quote starts at a > line with text, with or without a paragraph before it; bare marker lines inside it are
  // blank lines of the quote.
  t.equal(html('> text'), '<blockquote>\n<p>text</p>\n</blockquote>');
  t.equal(html('before\n> text'), '<p>before</p>\n<blockquote>\n<p>text</p>\n</blockquote>');
  t.equal(html('> a\n>\n> b'), '<blockquote>\n<p>a</p>\n<p>b</p>\n</blockquote>');
  t.equal(html('>\n> a'), '<blockquote>\n<p>a</p>\n</blockquote>');
  t.equal(html('> a\n>'), '<blockquote>\n<p>a</p>\n</blockquote>');
});

t.test('lists nest by two spaces a level', async (t) => {
  t.equal(html('1. A\n1. B\n  1. C\n1. D'), '<ol>\n<li>A</li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>');
  t.equal(html('* a\n  * b\n    * c'), '<ul>\n<li>a<ul>\n<li>b<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n</ul>');
  // Three spaces are still one level.
  t.equal(html('- a\n   - b'), '<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>');
  // Ordered and bulleted lists nest in each other; an item of the other kind starts a block (a blank line is
  // put before it), so the item it nests in gets a paragraph.
  t.equal(html('- a\n  1. b'), '<ul>\n<li>\n<p>a</p>\n<ol>\n<li>b</li>\n</ol>\n</li>\n</ul>');
  t.equal(html('1. a\n   - b'), '<ol>\n<li>\n<p>a</p>\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ol>');
  // An item more than one level deeper than the one before it is a line of that item's text.
  t.equal(html('- a\n    - b'), '<ul>\n<li>a<br>\n    - b</li>\n</ul>');
  // A list begins with an item indented by at most one space.
  t.equal(html(' - a'), '<ul>\n<li>a</li>\n</ul>');
  t.equal(html('  - a'), '<p>- a</p>');
  // After a blank line, two spaces a level continue the item at that level.
  t.equal(html('1. a\n\n  more'), '<ol>\n<li>\n<p>a</p>\n<p>more</p>\n</li>\n</ol>');
  t.equal(html('1. a\n\nafter'), '<ol>\n<li>a</li>\n</ol>\n<p>after</p>');
});

t.test('an ordered list starts at its first number, nested lists too', async (t) => {
  t.equal(html('3. a\n4. b'), '<ol start="3">\n<li>a</li>\n<li>b</li>\n</ol>');
  t.equal(html('1. A\n3. B\n  2. C\n1. D'), '<ol>\n<li>A</li>\n<li>B<ol start="2">\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>');
  // A one-digit item under a line of text starts a list there, at its number.
  t.equal(html('text\n2. x'), '<p>text</p>\n<ol start="2">\n<li>x</li>\n</ol>');
  t.equal(html('text\n10. x'), '<p>text<br>\n10. x</p>');
});

t.test('bullets of any character make one list', async (t) => {
  t.equal(html('* a\n- b\n+ c'), '<ul>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n</ul>');
  t.equal(html('- a\n  * b\n  + c'), '<ul>\n<li>a<ul>\n<li>b</li>\n<li>c</li>\n</ul>\n</li>\n</ul>');
  // A bulleted and an ordered list next to each other stay two lists.
  t.equal(html('* a\n1. b'), '<ul>\n<li>a</li>\n</ul>\n<ol>\n<li>b</li>\n</ol>');
});

t.test('only digits and a dot, or a bullet, then a space, make an item', async (t) => {
  t.equal(html('1) a'), '<p>1) a</p>');
  t.equal(html('-'), '<p>-</p>');
  t.equal(html('*'), '<p>*</p>');
  t.equal(html('-a'), '<p>-a</p>');
});

t.test('items get paragraphs one by one, next to the blank lines', async (t) => {
  t.equal(html('* a\n* b'), '<ul>\n<li>a</li>\n<li>b</li>\n</ul>');
  t.equal(html('* a\n\n* b\n* c'), '<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n<li>c</li>\n</ul>');
  t.equal(html('- a\n- b\n\n  c'), '<ul>\n<li>a</li>\n<li>\n<p>b</p>\n<p>c</p>\n</li>\n</ul>');
  t.equal(html('* a\n\n- b'), '<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>');
});

t.test('indented code is no list', async (t) => {
  t.equal(html('para:\n\n    1. one\n    2. two'), '<p>para:</p>\n<div class="codehilite"><pre><span></span><code>1. one\n2. two\n</code></pre></div>');
});

t.test('spaces around line breaks are kept', async (t) => {
  t.equal(html('test  '), '<p>test  </p>');
  t.equal(html('a  \nb'), '<p>a  <br>\nb</p>');
  t.equal(html('a \nb'), '<p>a <br>\nb</p>');
  t.equal(html('a\n  b'), '<p>a<br>\n  b</p>');
  t.equal(html('* a\n  b'), '<ul>\n<li>a<br>\n  b</li>\n</ul>');
  t.equal(html('* a\n  * b\n    c'), '<ul>\n<li>a<ul>\n<li>b<br>\n  c</li>\n</ul>\n</li>\n</ul>');
});

t.test('a code block closes only at its own fence', async (t) => {
  const code = (body: string): string => `<div class="codehilite"><pre><span></span><code>${body}</code></pre></div>`;
  // A longer fence is content; an unclosed block runs to the end of the message.
  t.equal(html('```\ncode\n````\nmore'), code('code\n````\nmore\n'));
  t.equal(html('~~~~\na\n~~~~~\n~~~~\nafter'), `${code('a\n~~~~~\n')}\n<p>after</p>`);
  // Fence lines inside a code or math block open nothing.
  t.equal(html('```\n```python\nx\n```'), code('```python\nx\n'));
  // A quote holds Markdown: a fence inside it opens a block, and the quote closes after that block.
  t.equal(html('```quote\n```python\nx\n```\n```'), `<blockquote>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code>x\n</code></pre></div>\n</blockquote>`);
  t.equal(html('```\na\n```\nb\n```\nc\n```'), `${code('a\n')}\n<p>b</p>\n${code('c\n')}`);
});

t.test('each paragraph of a math block is an equation of its own', async (t) => {
  const out = html('```math\na\n\nb\n```');
  t.equal(out.match(/<p><span class="katex-display">/g)?.length, 2);
  t.match(out, /<annotation encoding="application\/x-tex">a<\/annotation>/);
  t.match(out, /<annotation encoding="application\/x-tex">b<\/annotation>/);
  // An equation that does not parse is shown as written; its neighbours still render.
  const mixed = html('```math\n\\frac{\n\nx\n```');
  t.match(mixed, /^<p><span class="tex-error">\\frac\{<\/span><\/p>\n<p><span class="katex-display">/);
});

t.test('text right under bare > lines is quoted', async (t) => {
  t.equal(html('>\n>\ntext'), '<blockquote>\n<p>text</p>\n</blockquote>');
  t.equal(html('text\n>\nmore'), '<p>text</p>\n<blockquote>\n<p>more</p>\n</blockquote>');
});

t.test('a block after a blank line in a list loses two spaces a level on every line', async (t) => {
  t.equal(
    html('* One \n  * Two\n\n    Two continued\n    not code'),
    '<ul>\n<li>One <ul>\n<li>\n<p>Two</p>\n<p>Two continued<br>\nnot code</p>\n</li>\n</ul>\n</li>\n</ul>',
  );
});

t.test('a spoiler without a header keeps the header line', async (t) => {
  t.equal(
    html('```spoiler\ncontent\n```'),
    '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>',
  );
});

t.test('a display-math error escapes quotes; an inline one does not', async (t) => {
  t.equal(html('```math\n\\frac{"a\'\n```'), '<p><span class="tex-error">\\frac{&quot;a&#x27;</span></p>');
  t.equal(html('$$\\frac{"a\'$$'), '<p><span class="tex-error">$$\\frac{"a\'$$</span></p>');
  // Only the error span is affected.
  t.equal(html('```math\n\\frac{\n```\n"quoted" it\'s'), '<p><span class="tex-error">\\frac{</span></p>\n<p>"quoted" it\'s</p>');
});

t.test('inside a > quote, a list under a line of text stays text (no blank line is put before it there)', async (t) => {
  t.equal(html('> text\n> 5. x'), '<blockquote>\n<p>text<br>\n5. x</p>\n</blockquote>');
});
