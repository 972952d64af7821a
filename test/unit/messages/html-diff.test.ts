import t from 'tap';
import { highlightHtmlDifferences } from '../../../src/domain/messages/html-diff.js';

// content_html_diff by lxml's htmldiff rules (lxml/html/diff.py) and the real server's highlighting
// (zerver/lib/html_diff.py). Each expected string is what those rules give for the two rendered
// versions: words are diffed with the tags around them, inserted words go in front of the deleted
// ones they replace, a run of changes inside a block stays inside it, and the whole is in a <div>.
const ins = (html: string) => `<span class="highlight_text_inserted">${html}</span>`;
const del = (html: string) => `<span class="highlight_text_deleted">${html}</span>`;
const diff = highlightHtmlDifferences;

t.test("the real server's own cases", async (t) => {
  t.equal(diff('<p>content before edit</p>', '<p>content after edit</p>'),
    `<div><p>content ${ins('after')} ${del('before')} edit</p></div>`, 'a word changed');
  t.equal(diff(
    '<p>content before edit, line 1</p>\n<p>content before edit, line 3</p>',
    '<p>content before edit, line 1<br>\ncontent after edit, line 2<br>\ncontent before edit, line 3</p>',
  ), `<div><p>content before edit, line 1<br> content ${ins('after edit, line 2<br> content')} before edit, line 3</p></div>`,
  'a line added, the paragraphs joined: the line break goes into the insertion, the old paragraph end is dropped');
  t.equal(diff(
    '<p>Here is a link to <a href="http://www.zulip.org">zulip</a>.</p>',
    '<p>Here is a link to <a href="http://www.zulipchat.com">zulip</a>.</p>',
  ), `<div><p>Here is a link to <a href="http://www.zulipchat.com">zulip ${ins(' Link: http://www.zulipchat.com .')} ${del(' Link: http://www.zulip.org .')} </a></p></div>`,
  'a changed link target shows both targets, inside the link');
  t.equal(diff('', ''), '<div></div>', 'nothing rendered on either side');
  t.equal(diff('<p>Hello!</p>', '<p>Howdy!</p>'),
    `<div><p>${ins('Howdy!')}</p> <p>${del('Hello!')}</p></div>`, "the API documentation's example: a whole paragraph replaced");
});

t.test('words added and removed', async (t) => {
  t.equal(diff('<p>the quick brown fox jumps over the lazy dog</p>', '<p>the quick brown fox jumps high over the lazy dog</p>'),
    `<div><p>the quick brown fox jumps ${ins('high')} over the lazy dog</p></div>`);
  // Equal runs of up to two words (in a version of 8 words or more) are not kept as equal: the
  // change takes them in rather than shredding the sentence.
  t.equal(diff('<p>the quick brown fox jumps over the lazy dog</p>', '<p>the quick fox jumps over the lazy dog</p>'),
    `<div><p> ${ins('the quick')} ${del('the quick brown')} fox jumps over the lazy dog</p></div>`);
  t.equal(diff('<p>Tom &amp; Jerry say "hi" &lt;b&gt; café one two</p>', '<p>Tom &amp; Jerry say "hi" &lt;b&gt; café one three</p>'),
    `<div><p>Tom &amp; Jerry say "hi" &lt;b&gt; café one ${ins('three')} ${del('two')} </p></div>`, 'text is escaped as libxml2 writes it');
});

t.test('paragraphs, lists, quotes and tables', async (t) => {
  t.equal(diff('<p>one two three</p>', '<p>one two three</p>\n<p>four five</p>'),
    `<div><p>one two three</p> <p>${ins('four five')}</p></div>`, 'a paragraph added: the insertion goes inside it');
  t.equal(diff('<p>first paragraph here</p>\n<p>second paragraph here</p>', '<p>first paragraph here</p>'),
    `<div><p>first paragraph here</p> <p>${del('second paragraph here')}</p></div>`, 'a paragraph removed');
  t.equal(diff('<ul>\n<li>one</li>\n<li>two</li>\n</ul>', '<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>'),
    `<div><ul><li>one</li> <li>two</li> <li>${ins('three')}</li> </ul></div>`, 'a list item added');
  t.equal(diff(
    '<blockquote>\n<p>quoted text here</p>\n</blockquote>\n<p>reply</p>',
    '<blockquote>\n<p>quoted text here</p>\n</blockquote>\n<p>new reply</p>',
  ), `<div><blockquote><p>quoted text here</p> </blockquote> <p>${ins('new reply')}</p> <p>${del('reply')}</p></div>`);
  const table = (cell: string) =>
    `<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>${cell}</td>\n</tr>\n</tbody>\n</table>`;
  t.equal(diff(table('2'), table('3')),
    `<div><table><thead><tr><th>a</th> <th>b</th> </tr> </thead> <tbody><tr><td>1</td> <td>${ins('3')}</td> <td>${del('2')}</td> </tr> </tbody> </table></div>`,
    'a changed cell: the old cell comes back after the new one, inside the row (no HTML5 foster-parenting)');
});

t.test('formatting, mentions and code', async (t) => {
  t.equal(diff('<p>make it bold please</p>', '<p>make it <strong>bold</strong> please</p>'),
    '<div><p>make it <strong>bold</strong> please</p></div>', 'only words count: formatting added alone shows no change');
  t.equal(diff('<p>make it <strong>bold</strong> please</p>', '<p>make it <em>bolder</em> please</p>'),
    `<div><p>make it ${ins('<em>bolder</em> please')} ${del('<strong>bold</strong> please')} </p></div>`, 'the deleted words keep their old formatting');
  t.equal(diff('<p>x <del>struck</del> y</p>', '<p>x <del>struck</del> z</p>'),
    `<div><p>x struck ${ins('z')} ${del('y')} </p></div>`, 'the <del> of struck-through text is dropped before diffing');
  t.equal(diff(
    '<p>hi <span class="user-mention" data-user-id="10">@King Hamlet</span> how are you</p>',
    '<p>hi <span class="user-mention" data-user-id="11">@Iago</span> how are you</p>',
  ), `<div><p> ${ins('hi <span class="user-mention" data-user-id="11">@Iago</span>')} ${del('hi <span class="user-mention" data-user-id="10">@King Hamlet</span>')} how are you</p></div>`);
  const code = (n: string) => '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">def</span> <span class="nf">f</span>'
    + `<span class="p">():</span>\n    <span class="k">return</span> <span class="mi">${n}</span>\n</code></pre></div>`;
  t.equal(diff(code('1'), code('2')),
    '<div><div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">def</span> <span class="nf">f</span><span class="p">():</span> '
    + `<span class="k">return</span> ${ins('<span class="mi">2</span>')} ${del('<span class="mi">1</span>')} </code></pre></div></div>`,
    'a code block changed: the whitespace between words is one space, as in lxml');
});

t.test('attributes are written as libxml2 writes them', async (t) => {
  const link = (last: string) => `<p><a href="https://example.com/a b?x=1&amp;y=é" title='say "hi"'>link</a> one two ${last}</p>`;
  t.equal(diff(link('three'), link('four')),
    `<div><p><a href="https://example.com/a%20b?x=1&amp;y=%C3%A9" title='say "hi"'>link</a> one two ${ins('four')} ${del('three')} </p></div>`,
    'a link target URI-escaped, a value holding `"` quoted with `\'`');
});

t.test('the diff never makes markup of text', async (t) => {
  // lxml writes a changed link target into the HTML as it is, and this one would come out as an
  // <img> with an onerror handler; here it stays text.
  const out = diff('<p><a href="https://x.example/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">link</a></p>', '<p><a href="https://x.example/">link</a></p>');
  t.equal(out, `<div><p><a href="https://x.example/">link ${ins(' Link: https://x.example/')} ${del(' Link: https://x.example/"&gt;&lt;img src=x onerror=alert(1)&gt;')} </a></p></div>`);
  t.notMatch(out, /<img/);
  const text = diff('<p>&lt;script&gt;alert(1)&lt;/script&gt; one</p>', '<p>&lt;script&gt;alert(2)&lt;/script&gt; one</p>');
  t.notMatch(text, /<script/, 'escaped text stays escaped');
});

t.test('where the alignment differs from difflib', async (t) => {
  // difflib grows the longest common run first ("paragraph third paragraph") and then drops the
  // lone "first" (equal runs of one word are dropped in a 4-word version), giving
  // <p> <ins>first</ins> </p><p><del>first paragraph</del></p><del> second</del> paragraph <p>third paragraph</p>;
  // jsdiff's shortest edit script keeps both paragraphs and deletes the one between.
  t.equal(diff('<p>first paragraph</p>\n<p>second paragraph</p>\n<p>third paragraph</p>', '<p>first paragraph</p>\n<p>third paragraph</p>'),
    `<div><p>first paragraph</p> <p>${del('second paragraph')}</p> <p>third paragraph</p></div>`);
});

t.test('a very different version is shown as replaced without a long diff', async (t) => {
  const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
  const started = Date.now();
  const out = diff(`<p>the same start ${words('old', 2000)} the same end</p>`, `<p>the same start ${words('new', 2000)} the same end</p>`);
  t.ok(Date.now() - started < 5_000, 'bounded work');
  t.equal(out, `<div><p>the same start ${ins(words('new', 2000))} ${del(words('old', 2000))} the same end</p></div>`, 'the changed middle replaced as a whole');
});
