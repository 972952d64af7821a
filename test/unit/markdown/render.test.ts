// Behaviour of renderMarkdown beyond the fixture HTML: what a message mentions and links to, linkifiers,
// topic links, emoji look-ups, and that no input yields active content.
import { fromHtml } from 'hast-util-from-html';
import type { Root, RootContent } from 'hast';
import t, { type Test } from 'tap';
import { emptyRenderContext, renderMarkdown, renderTopicLinks } from '../../../src/markdown/index.js';
import { unicodeEmojiByCode as emojiByCode, unicodeEmojiByName as emojiByName } from '../../../src/emoji/catalogue.js';
import { linkifiers, testContext } from './fixtures.js';

const ctx = testContext();
const render = (content: string) => renderMarkdown(content, ctx);

t.test('user mentions', async (t) => {
  const r = render('hi @**King Hamlet** and @**iago** and @**|8**');
  t.equal(
    r.html,
    '<p>hi <span class="user-mention" data-user-id="10">@King Hamlet</span> and <span class="user-mention" data-user-id="11">@Iago</span> and <span class="user-mention" data-user-id="8">@Cordelia, Lear\'s daughter</span></p>',
  );
  t.same(r.mentionedUserIds.sort((a, b) => a - b), [8, 10, 11]);
  t.notOk(r.streamWildcard);
});

t.test('silent mentions notify nobody', async (t) => {
  const r = render('@_**King Hamlet** @_*support* @_**all** @_**topic**');
  t.match(r.html, '<span class="user-mention silent" data-user-id="10">King Hamlet</span>');
  t.match(r.html, '<span class="user-group-mention silent" data-user-group-id="17">support</span>');
  t.same(r.mentionedUserIds, []);
  t.same(r.mentionedGroupIds, []);
  t.notOk(r.streamWildcard);
  t.notOk(r.topicWildcard);
});

t.test('mention by name and id', async (t) => {
  t.same(render('@**Twin|21**').mentionedUserIds, [21]);
  t.same(render('@**Twin**').mentionedUserIds, [], 'an ambiguous name mentions nobody');
  t.equal(render('@**Twin**').html, '<p>@<strong>Twin</strong></p>');
  t.same(render('@**Iago|10**').mentionedUserIds, [], 'name and id must agree');
  t.same(render('@**Nobody**').mentionedUserIds, []);
  t.same(render('email@**King Hamlet**').mentionedUserIds, [], 'not after a word character');
  t.same(render('`@**King Hamlet**`').mentionedUserIds, [], 'not in code');
  t.same(render('@**Former Employee**').mentionedUserIds, [], 'deactivated users are not notified');
});

t.test('wildcards', async (t) => {
  for (const name of ['all', 'everyone', 'channel', 'stream']) {
    const r = render(`@**${name}** look`);
    t.ok(r.streamWildcard, name);
    t.notOk(r.topicWildcard, name);
    t.match(r.html, `<span class="user-mention channel-wildcard-mention" data-user-id="*">@${name}</span>`);
  }
  const topic = render('@**topic**');
  t.ok(topic.topicWildcard);
  t.notOk(topic.streamWildcard);
  t.equal(topic.html, '<p><span class="topic-mention">@topic</span></p>');
});

t.test('group mentions', async (t) => {
  const r = render('@*support* and @*hamletcharacters* and @*nogroup*');
  t.same(r.mentionedGroupIds.sort((a, b) => a - b), [17, 18]);
  t.match(r.html, '<span class="user-group-mention" data-user-group-id="17">@support</span>');
  t.match(r.html, '@<em>nogroup</em>');
});

t.test('channel, topic and message links', async (t) => {
  t.equal(render('#**Denmark**').html, '<p><a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>');
  t.equal(
    render('#**Zulip updates.>new release**').html,
    '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Zulip-updates.2E/topic/new.20release">#Zulip updates. &gt; new release</a></p>',
  );
  t.equal(
    render('#**Verona>lunch@214**').html,
    '<p><a class="message-link" href="/#narrow/channel/3-Verona/topic/lunch/near/214">#Verona &gt; lunch @ 💬</a></p>',
  );
  t.equal(render('#**Nowhere**').html, '<p>#<strong>Nowhere</strong></p>');
});

t.test('links, images and attachments', async (t) => {
  const plain = render('no links here');
  t.notOk(plain.hasLink);
  t.notOk(plain.hasImage);
  t.notOk(plain.hasAttachment);

  const link = render('see https://example.com/page');
  t.ok(link.hasLink);
  t.notOk(link.hasAttachment);

  const upload = render('[report.pdf](/user_uploads/2/ab/xyz/report.pdf)');
  t.ok(upload.hasLink);
  t.ok(upload.hasAttachment);
  t.notOk(upload.hasImage);
  t.same(upload.linkedUploadPaths, ['/user_uploads/2/ab/xyz/report.pdf']);

  const image = render('[cat.png](/user_uploads/2/cd/uvw/cat.png) and [again](http://zulip.testserver/user_uploads/2/cd/uvw/cat.png)');
  t.ok(image.hasImage);
  t.ok(image.hasAttachment);
  t.same(image.linkedUploadPaths, ['/user_uploads/2/cd/uvw/cat.png']);
  t.match(image.html, '<div class="message_inline_image"><a href="/user_uploads/2/cd/uvw/cat.png" title="cat.png"><img src="/user_uploads/2/cd/uvw/cat.png"></a></div>');

  const external = render('https://example.com/picture.jpg');
  t.ok(external.hasImage);
  t.notOk(external.hasAttachment);
});

t.test('/me messages', async (t) => {
  t.ok(render('/me waves').isMeMessage);
  t.notOk(render('I /me waves').isMeMessage);
  t.notOk(render('/meh').isMeMessage);
});

t.test('linkifiers in content', async (t) => {
  const r = render('fixes #1234 and ZUL-7, not a#99 or `#5555`');
  t.equal(
    r.html,
    '<p>fixes <a href="https://trac.example.com/ticket/1234">#1234</a> and <a href="https://zulip.example.com/issues/7">ZUL-7</a>, not a#99 or <code>#5555</code></p>',
  );
  t.ok(r.hasLink);
  t.equal(renderMarkdown('fixes #1234', emptyRenderContext('http://x')).html, '<p>fixes #1234</p>', 'no linkifiers, no links');
});

t.test('topic links', async (t) => {
  t.same(renderTopicLinks('#1234 and ZUL-9 via https://example.com/x', linkifiers), [
    { text: '#1234', url: 'https://trac.example.com/ticket/1234' },
    { text: 'ZUL-9', url: 'https://zulip.example.com/issues/9' },
    { text: 'https://example.com/x', url: 'https://example.com/x' },
  ]);
  t.same(renderTopicLinks('plain topic', linkifiers), []);
  t.same(renderTopicLinks('#12', [{ id: 9, pattern: '#(?P<id>[0-9]+)', urlTemplate: 'javascript:alert({id})' }]), [], 'unsafe templates give no link');
});

t.test('emoji', async (t) => {
  t.same(emojiByName('+1'), { code: '1f44d', name: '+1' });
  t.same(emojiByName('thumbs_up'), { code: '1f44d', name: 'thumbs_up' });
  t.equal(emojiByName('smiley')?.code, '1f603');
  t.equal(emojiByName('no_such_emoji'), undefined);
  t.same(emojiByCode('1f4a9'), { code: '1f4a9', name: 'poop' });
  t.same(emojiByCode('1f441-200d-1f5e8'), { code: '1f441-200d-1f5e8', name: 'eye_in_speech_bubble' });
  t.equal(emojiByCode('ffffff'), undefined);
  t.equal(
    render(':green_tick: :poop:').html,
    '<p><img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/images/1.png" title="green tick"> <span aria-label="poop" class="emoji emoji-1f4a9" role="img" title="poop">:poop:</span></p>',
  );
});

t.test('global times', async (t) => {
  t.equal(render('<time:2024-01-01T10:00:00+00:00>').html, '<p><time datetime="2024-01-01T10:00:00Z">2024-01-01T10:00:00+00:00</time></p>');
  t.equal(render('<time:1496701800>').html, '<p><time datetime="2017-06-05T22:30:00Z">1496701800</time></p>');
});

// Classic cross-site scripting payloads: whatever the renderer makes of them, the HTML must not run anything.
const xssPayloads = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=http://xss.example/xss.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<img src="x" onerror="alert(1)"/>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<body onload=alert(1)>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<a href="javascript:alert(1)">x</a>',
  '[click](javascript:alert(1))',
  '[click](JaVaScRiPt:alert(1))',
  '[click](java\tscript:alert(1))',
  '[click](&#106;avascript:alert(1))',
  '[click](javascript&colon;alert(1))',
  '[click](  javascript:alert(1))',
  '[click](<javascript:alert(1)>)',
  '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[click](vbscript:msgbox(1))',
  '![img](javascript:alert(1))',
  '![img](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
  '<javascript:alert(1)>',
  'javascript:alert(1)',
  '<http://x.example/" onmouseover="alert(1)>',
  'https://example.com/"onmouseover="alert(1)',
  'https://example.com/<script>alert(1)</script>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<span style="x:expression(alert(1))">x</span>',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '```\n</code></pre><script>alert(1)</script>\n```',
  '`<script>alert(1)</script>`',
  '$$\\href{javascript:alert(1)}{x}$$',
  '$$\\url{javascript:alert(1)}$$',
  '```math\n\\href{javascript:alert(1)}{click}\n```',
  '```spoiler <img src=x onerror=alert(1)>\n<script>alert(1)</script>\n```',
  '<time:<script>alert(1)</script>>',
  '@**<script>alert(1)</script>**',
  '#**<img src=x onerror=alert(1)>**',
  ':<script>:',
  '[x](https://example.com "title\\" onmouseover=\\"alert(1)")',
  '<a href="&#x6A;avascript:alert(1)">x</a>',
  '[a](javascript://%0aalert(1))',
  '<object data="javascript:alert(1)">',
  '<form action="javascript:alert(1)"><button>x</button></form>',
];

// Judged on the parsed HTML, so escaped text that merely spells a payload is fine.
function assertInert(t: Test, html: string, label: string): void {
  const problems: string[] = [];
  const visit = (node: Root | RootContent): void => {
    if (node.type === 'element') {
      if (['script', 'iframe', 'object', 'embed', 'form', 'style', 'body', 'base', 'meta', 'link'].includes(node.tagName)) {
        problems.push(`<${node.tagName}>`);
      }
      for (const [name, value] of Object.entries(node.properties)) {
        if (/^on/i.test(name)) problems.push(`attribute ${name}`);
        const text = Array.isArray(value) ? value.join(' ') : String(value);
        const squeezed = text.replace(/[\u0000-\u0020]/g, '').toLowerCase();
        if (['href', 'src', 'action', 'formAction', 'data', 'xLinkHref'].includes(name) && /^(?:javascript|vbscript|data):/.test(squeezed)) {
          problems.push(`${name}=${text}`);
        }
        if (name === 'style' && /url\(|expression|javascript:/i.test(text)) problems.push(`style=${text}`);
      }
    }
    if ('children' in node) for (const child of node.children) visit(child);
  };
  visit(fromHtml(html, { fragment: true }));
  t.same(problems, [], `${label} renders inert: ${html}`);
}

t.test('XSS corpus', async (t) => {
  t.ok(xssPayloads.length >= 30);
  for (const payload of xssPayloads) assertInert(t, render(payload).html, JSON.stringify(payload));
});

t.test('linkifier templates cannot produce script URLs', async (t) => {
  const hostile = testContext({
    linkifiers: [
      { id: 1, pattern: 'BUG-(?P<id>[0-9]+)', urlTemplate: 'javascript:alert({id})' },
      { id: 2, pattern: 'DATA-(?P<id>[0-9]+)', urlTemplate: 'data:text/html,{id}' },
      { id: 3, pattern: 'ESC-(?P<id>[a-z"<>]+)', urlTemplate: 'https://x.example/{id}' },
      { id: 4, pattern: 'RAW-(?P<id>.+)', urlTemplate: 'https://x.example/{+id}' },
    ],
  });
  for (const content of ['BUG-1', 'DATA-2', 'ESC-a"onmouseover', 'RAW-"><script>alert(1)</script>']) {
    const r = renderMarkdown(content, hostile);
    assertInert(t, r.html, content);
  }
  t.equal(renderMarkdown('BUG-1', hostile).html, '<p>BUG-1</p>');
});
