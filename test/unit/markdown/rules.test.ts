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
