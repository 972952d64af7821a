// The real server's Markdown rules, one family at a time (Python-Markdown with Zulip's processors). Each
// expectation follows from the rule as the real server states it (its patterns and processors), not from a
// copied output; the fixture cases in conformance.test.ts check the same rules on the real server's own HTML.
import t from 'tap';
import { renderMarkdown, topicLinkKey } from '../../../src/markdown/index.js';
import { encodeHashComponent } from '../../../src/markdown/urls.js';
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
  // A numeric offset or Z written onto the time, as the server itself writes scheduled times.
  t.equal(datetime('2026-11-26 17:28:03+00:00'), '2026-11-26T17:28:03Z');
  t.equal(datetime('2026-11-26 17:28:03-05:00'), '2026-11-26T22:28:03Z');
  // The real server writes Python's isoformat: microseconds whenever the time has some.
  t.equal(datetime('2026-11-26 17:28:03.5+0530'), '2026-11-26T11:58:03.500000Z');
  t.equal(datetime('1700000000.25'), '2023-11-14T22:13:20.250000Z');
  t.equal(datetime('Dec 5 2026 10:30Z'), '2026-12-05T10:30:00Z');
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

t.test('an emoticon needs whitespace, punctuation or the edge of its text on both sides; an element is none', async (t) => {
  // The real server translates emoticons last, when every other inline element is already a placeholder.
  const emoticons = (content: string): string =>
    renderMarkdown(content, testContext({ translateEmoticons: true })).html.replace(/<span aria-label="smile"[^>]*>:smile:<\/span>/g, '[smile]');
  t.equal(emoticons(':)**bold**'), '<p>:)<strong>bold</strong></p>');
  t.equal(emoticons('*x*:)'), '<p><em>x</em>:)</p>');
  t.equal(emoticons('`a`:)'), '<p><code>a</code>:)</p>');
  t.equal(emoticons(':)[a](http://x.com)'), '<p>:)<a href="http://x.com">a</a></p>');
  t.equal(emoticons('http://x.com:)'), '<p><a href="http://x.com">http://x.com</a>:)</p>');
  t.equal(emoticons(':smile::)'), '<p>[smile]:)</p>');
  // Whitespace or punctuation between them, or the edge of an element's own text, is enough.
  t.equal(emoticons(':) **bold**'), '<p>[smile] <strong>bold</strong></p>');
  t.equal(emoticons('*x* :)'), '<p><em>x</em> [smile]</p>');
  t.equal(emoticons('**:)**'), '<p><strong>[smile]</strong></p>');
  t.equal(emoticons('a, :).'), '<p>a, [smile].</p>');
});

t.test('a time without a year, day or time of day takes them from the moment of rendering', async (t) => {
  // The real server's date parser fills missing fields from today at midnight.
  const now = new Date('2026-11-26T15:51:00Z');
  const datetime = (body: string): string | undefined =>
    /datetime="([^"]*)"/.exec(renderMarkdown(`<time:${body}>`, testContext({ now })).html)?.[1];
  t.equal(datetime('5 DEC'), '2026-12-05T00:00:00Z');
  t.equal(datetime('Dec 5'), '2026-12-05T00:00:00Z');
  t.equal(datetime('Dec 5 10:30 pm'), '2026-12-05T22:30:00Z');
  t.equal(datetime('10:30'), '2026-11-26T10:30:00Z');
  t.equal(datetime('3pm IST'), '2026-11-26T09:30:00Z');
  t.equal(datetime('February'), '2026-02-26T00:00:00Z');
  t.equal(datetime('2017'), '2017-11-26T00:00:00Z');
  t.equal(datetime('12/25'), '2026-12-25T00:00:00Z');
  // A weekday alone is the next such day, today included.
  t.equal(datetime('Friday 9am'), '2026-11-27T09:00:00Z');
  t.equal(datetime('Thursday'), '2026-11-26T00:00:00Z');
  // Full dates are unaffected; impossible ones are errors.
  t.equal(datetime('Jun 5th 2017, 10:30PM'), '2017-06-05T22:30:00Z');
  t.equal(datetime('1496701800'), '2017-06-05T22:30:00Z');
  t.equal(datetime('Feb 30'), undefined);
  t.match(renderMarkdown('<time:Feb 30>', testContext({ now })).html, /timestamp-error/);
});

t.test('numbers of a date are read as the real server reads them: month first, and a year only when it cannot be a day', async (t) => {
  // Outcomes as python-dateutil 2.9 gives them (the real server's parser, default month first), with today
  // 2026-11-26 filling what is missing.
  const now = new Date('2026-11-26T15:51:00Z');
  const datetime = (body: string): string | undefined =>
    /datetime="([^"]*)"/.exec(renderMarkdown(`<time:${body}>`, testContext({ now })).html)?.[1];
  // Two numbers: month then day; never swapped, so a first number over 12 is a month that does not exist.
  t.equal(datetime('12/25'), '2026-12-25T00:00:00Z');
  t.equal(datetime('3-8'), '2026-03-08T00:00:00Z');
  t.equal(datetime('25/12'), undefined);
  t.equal(datetime('13-01'), undefined);
  t.match(renderMarkdown('<time:25/12>', testContext({ now })).html, /timestamp-error/);
  // ...unless one of them cannot be a day: that one is the year (the day is today's, within the month).
  t.equal(datetime('2024-02'), '2024-02-26T00:00:00Z');
  t.equal(datetime('2024/02 10:30'), '2024-02-26T10:30:00Z');
  t.equal(datetime('12/2024'), '2024-12-26T00:00:00Z');
  t.equal(datetime('02-99'), '1999-02-26T00:00:00Z');
  t.equal(datetime('99-01'), '1999-01-26T00:00:00Z');
  t.equal(datetime('2023-02'), '2023-02-26T00:00:00Z');
  t.equal(datetime('2024-13'), undefined);
  // Three numbers: a first number over 12 (and not over 31) is the day; a year written first stays first.
  t.equal(datetime('25/12/2024'), '2024-12-25T00:00:00Z');
  t.equal(datetime('12/25/24'), '2024-12-25T00:00:00Z');
  t.equal(datetime('25.12.2024'), '2024-12-25T00:00:00Z');
  t.equal(datetime('99-01-02'), '1999-01-02T00:00:00Z');
  t.equal(datetime('2024/25/12'), undefined);
  t.equal(datetime('25/12 2024'), '2024-12-25T00:00:00Z');
  // A month name settles the month; the other number is a day, or the year when it cannot be one.
  t.equal(datetime('5-Jan-2024'), '2024-01-05T00:00:00Z');
  t.equal(datetime('Jan-5'), '2026-01-05T00:00:00Z');
  t.equal(datetime('Feb 2024'), '2024-02-26T00:00:00Z');
  t.equal(datetime('Dec 45'), '2045-12-26T00:00:00Z');
  t.equal(datetime('Dec 5 Jan'), undefined);
  // One number alone: a day, or a year when it cannot be a day; failing both, UNIX seconds.
  t.equal(datetime('5'), '2026-11-05T00:00:00Z');
  t.equal(datetime('45'), '2045-11-26T00:00:00Z');
  t.equal(datetime('31'), '1970-01-01T00:00:31Z');
  t.equal(datetime('123'), '0123-11-26T00:00:00Z');
  // Digits run together: YYMMDD, YYYYMMDD and YYYYMMDDhhmm.
  t.equal(datetime('240205'), '2005-02-24T00:00:00Z');
  t.equal(datetime('20240205'), '2024-02-05T00:00:00Z');
  t.equal(datetime('202402051030'), '2024-02-05T10:30:00Z');
  // Month and weekday names are whole names or their three-letter forms (and Sept).
  t.equal(datetime('Sept 5'), '2026-09-05T00:00:00Z');
  t.equal(datetime('Decem 5'), undefined);
  // A zone needs a time of day before it; GMT+3 is three hours behind, as POSIX writes zones.
  t.equal(datetime('UTC 10:30'), undefined);
  t.equal(datetime('10:30 GMT+0300'), '2026-11-26T13:30:00Z');
  t.equal(datetime('10:30 +0300'), '2026-11-26T07:30:00Z');
  // Words the parser passes over are no date.
  t.equal(datetime('on'), undefined);
});

t.test('* emphasis follows the real server patterns, not CommonMark delimiter runs', async (t) => {
  // **x** takes any text up to the next ** on the line, spaces included.
  t.equal(html('** a **'), '<p><strong> a </strong></p>');
  t.equal(html('**foo*bar**'), '<p><strong>foo*bar</strong></p>');
  t.equal(html('**a**b**'), '<p><strong>a</strong>b**</p>');
  // *x* needs no space just inside its markers and holds no * (nor ^).
  t.equal(html('a * b * c'), '<p>a * b * c</p>');
  t.equal(html('*a *'), '<p>*a *</p>');
  t.equal(html('*foo**bar*'), '<p><em>foo</em><em>bar</em></p>');
  t.equal(html('*a^b*'), '<p>*a^b*</p>');
  // ** is matched before *, and the text inside a match is read by the later patterns only.
  t.equal(html('***a** b*'), '<p><strong>*a</strong> b*</p>');
  t.equal(html('*a **b** c*'), '<p><em>a <strong>b</strong> c</em></p>');
  t.equal(html('**a *b* c**'), '<p><strong>a <em>b</em> c</strong></p>');
  t.equal(html('a*b*c and a**b**c'), '<p>a<em>b</em>c and a<strong>b</strong>c</p>');
  // Elements found earlier (code, links) are opaque inside a match; none crosses a line.
  t.equal(html('**`x` [y](http://y.com)**'), '<p><strong><code>x</code> <a href="http://y.com">y</a></strong></p>');
  t.equal(html('**a\nb**'), '<p>**a<br>\nb**</p>');
  // A bare URL right after the markers is not linked: it must follow whitespace or an opening bracket.
  t.equal(html('**http://x.com**'), '<p><strong>http://x.com</strong></p>');
  // _ and __ never emphasize.
  t.equal(html('__ a __ and _ a _'), '<p>__ a __ and _ a _</p>');
  // An unknown mention or channel is text that the patterns then read.
  t.equal(html('@**nobody** #**nowhere**'), '<p>@<strong>nobody</strong> #<strong>nowhere</strong></p>');
});

t.test('a backslash escapes nothing', async (t) => {
  // The real server has no backslash escapes: the backslash stays, and the character after it keeps its meaning.
  t.equal(html('\\*a\\*'), '<p>\\<em>a\\</em></p>');
  t.equal(html('a\\_b \\# c'), '<p>a\\_b \\# c</p>');
  t.equal(html('a\\\nb'), '<p>a\\<br>\nb</p>');
  t.equal(html('`a\\*b`'), '<p><code>a\\*b</code></p>');
});

t.test('lists inside a > quote follow the same list rules as outside', async (t) => {
  // The real server parses a quote's lines, markers taken off, with the same block processors.
  t.equal(
    html('> - a\n>   - b\n> - c'),
    '<blockquote>\n<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ul>\n</blockquote>',
  );
  t.equal(
    html('> 1. A\n> 1. B\n>   1. C\n> 1. D'),
    '<blockquote>\n<ol>\n<li>A</li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>\n</blockquote>',
  );
  t.equal(html('> * a\n> - b\n> + c'), '<blockquote>\n<ul>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n</ul>\n</blockquote>');
  t.equal(html('> 3. a\n> 4. b'), '<blockquote>\n<ol start="3">\n<li>a</li>\n<li>b</li>\n</ol>\n</blockquote>');
  t.equal(html('>> - a\n>>   - b'), '<blockquote>\n<blockquote>\n<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n</blockquote>\n</blockquote>');
  // A bare > line is a blank line in the quote: the items around it get paragraphs.
  t.equal(html('> - a\n>\n> - b'), '<blockquote>\n<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>\n</blockquote>');
  // No blank line is put before an item under text there: it stays text.
  t.equal(html('> text\n> - a'), '<blockquote>\n<p>text<br>\n- a</p>\n</blockquote>');
});

t.test('mentions inside quotes are silent', async (t) => {
  const quoted = renderMarkdown('> @**Iago** and @*support* and @**all**', ctx);
  t.equal(
    quoted.html,
    '<blockquote>\n<p><span class="user-mention silent" data-user-id="11">Iago</span> and ' +
      '<span class="user-group-mention silent" data-user-group-id="17">support</span> and ' +
      '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>\n</blockquote>',
  );
  t.same([quoted.mentionedUserIds, quoted.mentionedGroupIds, quoted.streamWildcard], [[], [], false]);
  // A ```quote block is quoted text too; a mention outside the quote still notifies; code stays as written.
  const fenced = renderMarkdown('@**Iago**\n```quote\n@**King Hamlet**\n```', ctx);
  t.same(fenced.mentionedUserIds, [11]);
  t.match(fenced.html, /<span class="user-mention silent" data-user-id="10">King Hamlet<\/span>/);
  t.match(html('```\n> @**Iago**\n```'), /&gt; @\*\*Iago\*\*/);
});

t.test('a fence starts at the first character of a line, and a fence with no line inside is dropped', async (t) => {
  // The real server finds fences in the message's lines before any other syntax, at column 0 only.
  t.equal(html(' ```\ncode\n ```'), '<p><code>\ncode\n </code></p>');
  t.equal(html('    ```\n    x\n    ```'), '<div class="codehilite"><pre><span></span><code>```\nx\n```\n</code></pre></div>');
  t.notMatch(html('> ```\n> code\n> ```'), /codehilite/);
  t.notMatch(html('- a\n  ```\n  code\n  ```'), /codehilite/);
  // A fence at column 0 ends the list above it.
  t.equal(html('- a\n```\ncode\n```'), '<ul>\n<li>a</li>\n</ul>\n<div class="codehilite"><pre><span></span><code>code\n</code></pre></div>');
  t.equal(html('```\n```'), '');
  t.equal(html('a\n```'), '<p>a</p>');
  t.equal(html('```\n\n```'), '<div class="codehilite"><pre><span></span><code>\n</code></pre></div>');
});

t.test('image previews: none for quoted links, one per URL, placed where the real server places them', async (t) => {
  const preview = (url: string): string =>
    `<div class="message_inline_image"><a href="${url}"><img data-src-fullsize="/thumbnail?url=${encodeURIComponent(url)}&amp;size=full" src="/thumbnail?url=${encodeURIComponent(url)}&amp;size=thumbnail"></a></div>`;
  const png = 'https://x.com/a.png';
  t.equal(html(`> ${png}`), `<blockquote>\n<p><a href="${png}">${png}</a></p>\n</blockquote>`);
  // A paragraph that is only the bare link gives way to the preview.
  t.equal(html(png), preview(png));
  t.equal(html(`${png}\n\n${png}`), `${preview(png)}<p><a href="${png}">${png}</a></p>`);
  t.equal(html(`see ${png}`), `<p>see <a href="${png}">${png}</a></p>\n${preview(png)}`);
  // A link outside a paragraph or list item (a heading, bold text) is previewed at the end of the message.
  t.equal(html(`# see ${png}\n\nafter`), `<h1>see <a href="${png}">${png}</a></h1>\n<p>after</p>\n${preview(png)}`);
  // The URL pattern takes a * right after the path, as the real server's does.
  t.match(html(`*see ${png}* x`), `<a href="${png}*">`);
  // More than 24 distinct links: no previews at all.
  const many = Array.from({ length: 25 }, (_, i) => `https://x.com/${i}.png`).join(' ');
  t.notMatch(html(many), /message_inline_image/);
});

t.test('inline code keeps its text as typed, line breaks included', async (t) => {
  // The real server's backtick pattern spans lines and keeps them; a quote's markers are not part of it.
  t.equal(html('`a\nb`'), '<p><code>a\nb</code></p>');
  t.equal(html('> `a\n> b`'), '<blockquote>\n<p><code>a\nb</code></p>\n</blockquote>');
  t.equal(html('x ``  y  ``'), '<p>x <code>  y  </code></p>');
});

t.test('topic and message links read "#channel > topic"; the empty topic is named in italics', async (t) => {
  t.match(html('#**Denmark>some topic**'), />#Denmark &gt; some topic<\/a>/);
  t.match(html('#**Denmark>**'), />#Denmark &gt; <em>general chat<\/em><\/a>/);
  t.match(html('#**Denmark>danish@123**'), /href="\/#narrow\/channel\/1-Denmark\/topic\/danish\/near\/123">#Denmark &gt; danish @ 💬<\/a>/);
  t.match(html('#**Denmark>@123**'), />#Denmark &gt; <em>general chat<\/em> @ 💬<\/a>/);
  // With the topic's first readable message known (looked up before rendering), the link points at it.
  const targets = { ...ctx, topicLinkTargets: new Map([[topicLinkKey(1, 'some topic'), 42]]) };
  t.match(renderMarkdown('#**Denmark>Some Topic**', targets).html, /href="\/#narrow\/channel\/1-Denmark\/topic\/Some.20Topic\/with\/42">/);
  t.match(renderMarkdown('#**Denmark>some topic@7**', targets).html, /topic\/some.20topic\/near\/7"/);
});

t.test("a channel's narrow URL writes its name's spaces as -, and keeps * as it is", async (t) => {
  const spaced = { ...ctx, channelByName: (name: string) => (name === 'Stream #1234' ? { id: 61, name } : undefined) };
  t.match(renderMarkdown('#**Stream #1234>a b**', spaced).html, /href="\/#narrow\/channel\/61-Stream-.231234\/topic\/a.20b">#Stream #1234 &gt; a b<\/a>/);
  // Percent-encoding as Python's quote(safe="*") does, then "%" written as ".".
  t.equal(encodeHashComponent("a*b (c).d!'~_-"), 'a*b.20.28c.29.2Ed.21.27~_-');
  t.match(html('#**Zulip updates.**'), /href="\/#narrow\/channel\/9-Zulip-updates.2E"/);
});

t.test("a deactivated user's mention is silent; @**name|id** must spell the name as the user does; wildcards are lower case", async (t) => {
  const deactivated = renderMarkdown('@**Former Employee**', ctx);
  t.equal(deactivated.html, '<p><span class="user-mention silent" data-user-id="30">Former Employee</span></p>');
  t.same(deactivated.mentionedUserIds, []);
  t.match(html('@**King Hamlet|10**'), /class="user-mention" data-user-id="10">@King Hamlet</);
  t.notMatch(html('@**king hamlet|10**'), /user-mention/);
  t.match(html('@**king hamlet**'), /data-user-id="10">@King Hamlet</);
  t.match(html('@**all**'), /channel-wildcard-mention/);
  t.notMatch(html('@**ALL**'), /wildcard/);
  t.notMatch(html('@**Topic**'), /topic-mention/);
});

t.test('a linkifier match may follow any Unicode space and run up to an underscore', async (t) => {
  t.match(html('Hello\u00a0#123\u00a0World'), /href="https:\/\/trac.example.com\/ticket\/123"/);
  t.match(html('see\u2003#123'), /ticket\/123/);
  t.match(html('#123_notes'), /href="https:\/\/trac.example.com\/ticket\/123">#123<\/a>_notes/);
  t.notMatch(html('#123abc'), /ticket/);
  t.notMatch(html('x#123'), /ticket/);
});

t.test("links to the realm's own uploads become relative, as links to its views do", async (t) => {
  const bare = renderMarkdown('http://zulip.testserver/user_uploads/2/ff/file.txt', ctx);
  t.equal(bare.html, '<p><a href="user_uploads/2/ff/file.txt">http://zulip.testserver/user_uploads/2/ff/file.txt</a></p>');
  t.same(bare.linkedUploadPaths, ['/user_uploads/2/ff/file.txt']);
  t.equal(html('[hello](http://zulip.testserver/user_uploads/2/ff/file.txt)'), '<p><a href="user_uploads/2/ff/file.txt">hello</a></p>');
  t.equal(html('[x](http://zulip.testserver/#narrow/channel/1-Denmark)'), '<p><a href="#narrow/channel/1-Denmark">x</a></p>');
  // Other pages of the realm stay absolute.
  t.match(html('http://zulip.testserver/help/x'), /href="http:\/\/zulip.testserver\/help\/x"/);
});

t.test('a bitcoin address is a link to itself', async (t) => {
  const address = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
  t.equal(html(`To bitcoin:${address} or not`), `<p>To <a href="bitcoin:${address}">bitcoin:${address}</a> or not</p>`);
  t.match(html(`(bitcoin:${address}).`), new RegExp(`\\(<a href="bitcoin:${address}">bitcoin:${address}</a>\\)\\.`));
  // 25 to 34 base58 characters after a leading 1 or 3; 0, O, I and l are not base58.
  t.notMatch(html(`bitcoin:${address}XXXXXXXXXX`), /<a/);
  t.notMatch(html('bitcoin:1A1zP1eP5QGefi2DM'), /<a/);
  t.notMatch(html('bitcoin:2A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), /<a/);
  t.notMatch(html('bitcoin:1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0'), /<a/);
});

t.test('a character reference in text reaches the HTML as written; code escapes its &', async (t) => {
  t.equal(html('Hello, &copy; &#169; &#xA9; &unknown; AT&T'), '<p>Hello, &copy; &#169; &#xA9; &unknown; AT&amp;T</p>');
  t.equal(html('& &amp; &amp;amp;'), '<p>&amp; &amp; &amp;amp;</p>');
  t.equal(html('> &copy;'), '<blockquote>\n<p>&copy;</p>\n</blockquote>');
  t.equal(html('* &copy;\n* `&copy;`'), '<ul>\n<li>&copy;</li>\n<li><code>&amp;copy;</code></li>\n</ul>');
  t.match(html('```\n&copy;\n```'), /<code>&amp;copy;\n<\/code>/);
  t.equal(html('**&lt;b&gt;**'), '<p><strong>&lt;b&gt;</strong></p>');
  // A link's target is read as a browser reads the real server's: references decoded.
  t.equal(html('[&copy;](http://a.com/?a=1&amp;b=2)'), '<p><a href="http://a.com/?a=1&amp;b=2">&copy;</a></p>');
  t.equal(html('http://a.com/?a=1&amp;b=2'), '<p><a href="http://a.com/?a=1&amp;b=2">http://a.com/?a=1&amp;b=2</a></p>');
  // A reference cannot smuggle a scheme past the check.
  t.notMatch(html('[x](&#106;avascript:alert(1))'), /href="(?:&#106;|j)avascript/);
});
