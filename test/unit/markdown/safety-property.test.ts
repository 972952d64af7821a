// For random input, rendering either succeeds or refuses with the real server's "Unable to render message",
// and what it gives back, parsed the way a browser parses it, holds only the elements and attributes Zulip's
// messages use, with no event handler and no URL that could run script. Random input is built from Markdown
// syntax, the rules' edge cases (lists, quotes, fences, tildes) and classic payloads, plus arbitrary strings.
import fc from 'fast-check';
import { fromHtml } from 'hast-util-from-html';
import type { Root, RootContent } from 'hast';
import t from 'tap';
import { MarkdownRenderingError, renderMarkdown, renderMarkdownAsync } from '../../../src/markdown/index.js';
import { pygmentsClient } from '../../../src/markdown/pygments-client.js';
import { zulipSanitizeSchema } from '../../../src/markdown/sanitize-schema.js';
import { testContext } from './fixtures.js';

const ctx = testContext();

const allowedTags = new Set(zulipSanitizeSchema.tagNames);
const urlAttributes = new Set(['href', 'src', 'action', 'formAction', 'data', 'xLinkHref', 'poster', 'cite']);
const safeUrl = /^(?:https?:|mailto:|tel:|sms:|ftp:|\/|#|[^:]*$)/i;

/** Problems in `html`: elements outside the schema, event handlers, script URLs, scriptable styles. */
function problems(html: string): string[] {
  const found: string[] = [];
  const visit = (node: Root | RootContent): void => {
    if (node.type === 'element') {
      if (!allowedTags.has(node.tagName)) found.push(`<${node.tagName}>`);
      for (const [name, value] of Object.entries(node.properties)) {
        const text = Array.isArray(value) ? value.join(' ') : String(value);
        if (/^on/i.test(name)) found.push(`${node.tagName} ${name}`);
        const squeezed = text.replace(/[\u0000-\u0020]/g, '');
        if (urlAttributes.has(name) && !safeUrl.test(squeezed)) found.push(`${node.tagName} ${name}=${text}`);
        if (name === 'style' && /url\(|expression|javascript:|@import/i.test(text)) found.push(`${node.tagName} style=${text}`);
      }
    }
    if ('children' in node) for (const child of node.children) visit(child);
  };
  visit(fromHtml(html, { fragment: true }));
  return found;
}

const pieces = [
  // Markdown and the rules' edge cases
  '*', '**', '***', '~~', '~~ ', '~', '_', '>', '> ', '>>', '- ', '* ', '+ ', '1. ', '3. ', '10. ', '1) ', '  ', '    ',
  '\n', '\n\n', '\t', '```\n', '````\n', '```quote\n', '```spoiler x\n', '```math\n', '```py\n', '~~~\n', '`', '$$',
  '[', ']', '(', ')', '![', '](http://a.b/)', '#', '# ', '|', '|-|', '\\', '---', '@**Iago**', '@*support*',
  '#**Denmark**', '#**Denmark>t**', '<time:', '<time:31 Dec 2017 5:30 am IST>', ':smile:', 'a', 'b c', 'é', '😀',
  // payloads
  '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '<svg onload=alert(1)>', 'javascript:alert(1)',
  '[x](javascript:alert(1))', '[x](data:text/html,<script>)', '![x](javascript:alert(1))', '"', "'", '<', '&',
  '&#106;', ' onmouseover="alert(1)"', '<a href="javascript:alert(1)">', '$$\\href{javascript:alert(1)}{x}$$',
  'http://a.b/"onmouseover="alert(1)', '<iframe src=x>', '<style>', '</code></pre>', '&lt;script&gt;',
];

const textOf = (node: Root | RootContent): string =>
  node.type === 'text' ? node.value : 'children' in node ? node.children.map(textOf).join('') : '';

function check(content: string): string[] {
  try {
    return problems(renderMarkdown(content, ctx).html);
  } catch (error) {
    if (error instanceof MarkdownRenderingError) return [];
    throw error;
  }
}

t.test('random Markdown renders to safe HTML or is refused', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 120 }), (parts) => {
      const found = check(parts.join(''));
      if (found.length > 0) throw new Error(`unsafe output: ${found.join(', ')}`);
    }),
    { numRuns: 400 },
  );
  t.pass('400 token soups');
});

t.test('arbitrary strings render to safe HTML or are refused', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 60 }), (ascii, any) => {
      const found = check(ascii + any);
      if (found.length > 0) throw new Error(`unsafe output: ${found.join(', ')}`);
    }),
    { numRuns: 300 },
  );
  t.pass('300 random strings');
});

t.test('code highlighted by Pygments is safe HTML with the same text as the plain rendering', async (t) => {
  t.teardown(() => pygmentsClient().close());
  const fence = fc.constantFrom('```python\n', '```php\n', '```html\n', '```js\n', '```latex\n', '```\n:::html\n', '    #!/bin/sh\n    ');
  await fc.assert(
    fc.asyncProperty(fence, fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), fc.constantFrom(...pieces), async (open, body, piece) => {
      const content = `${open}${(body + piece).replaceAll('`', "'")}\n\`\`\`\nafter`;
      let highlighted: string;
      try {
        highlighted = (await renderMarkdownAsync(content, ctx)).html;
      } catch (error) {
        if (error instanceof MarkdownRenderingError) return;
        throw error;
      }
      const found = problems(highlighted);
      if (found.length > 0) throw new Error(`unsafe output: ${found.join(', ')}`);
      const text = (html: string) => textOf(fromHtml(html, { fragment: true })).replaceAll('\r', '\n');
      if (text(highlighted) !== text(renderMarkdown(content, ctx).html)) throw new Error(`text changed: ${highlighted}`);
    }),
    { numRuns: 150 },
  );
  t.pass('150 highlighted code blocks');
});

t.test('the checker itself finds what it looks for', async (t) => {
  t.same(problems('<p><a href="https://a.example/">x</a></p>'), []);
  t.same(problems('<script>x</script>'), ['<script>']);
  t.same(problems('<a href="javascript:alert(1)">x</a>'), ['a href=javascript:alert(1)']);
  t.same(problems('<img src="x" onerror="alert(1)">'), ['img onError']);
});
