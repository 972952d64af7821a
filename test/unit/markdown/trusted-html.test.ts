// Math is rendered once per distinct expression into a trusted fragment (sanitized and serialized ahead of the
// message): the output must be the same whether the expression was cached or not, and the sanitizer must keep
// removing every raw node it did not make itself.
import type { Root } from 'hast';
import { toHtml } from 'hast-util-to-html';
import t from 'tap';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { rehypeSanitizeKeepingTrusted, trustedFragment, zulipHtmlOptions } from '../../../src/markdown/trusted-html.js';
import { testContext } from './fixtures.js';

const ctx = testContext();

t.test('a cached expression renders exactly as it did the first time', async (t) => {
  const inputs = [
    '$$\\frac{a_{17}}{\\sqrt{17}}$$',
    'before $$\\frac{a_{17}}{\\sqrt{17}}$$ and again $$\\frac{a_{17}}{\\sqrt{17}}$$ after',
    '```math\n\\overrightarrow{AB_{17}}\n```',
    '| $$x_{17}$$ | [$$y_{17}$$](https://example.com) |\n| - | - |\n| **$$x_{17}$$** | b |',
  ];
  for (const input of inputs) {
    const first = renderMarkdown(input, ctx).html;
    const second = renderMarkdown(input, ctx).html;
    t.equal(second, first, input);
    t.match(first, /<span class="katex(-display)?">/, `${input}: rendered by KaTeX`);
  }
  // One occurrence or many: the same markup for each.
  const one = renderMarkdown('$$q_{17}^2$$', ctx).html;
  const many = renderMarkdown(Array.from({ length: 50 }, () => '$$q_{17}^2$$').join(' '), ctx).html;
  const inner = one.replace(/^<p>/, '').replace(/<\/p>$/, '');
  t.equal(many, `<p>${Array.from({ length: 50 }, () => inner).join(' ')}</p>`);
});

t.test('the sanitizer removes raw HTML it did not make, and keeps trusted fragments', async (t) => {
  const fragment = trustedFragment([{ type: 'element', tagName: 'span', properties: { className: ['katex'] }, children: [{ type: 'text', value: 'x' }] }]);
  const tree: Root = {
    type: 'root',
    children: [
      { type: 'raw', value: '<script>alert(1)</script>' },
      { type: 'element', tagName: 'p', properties: {}, children: [fragment, { type: 'raw', value: '<img src=x onerror=alert(1)>' }] },
    ],
  };
  const html = toHtml(rehypeSanitizeKeepingTrusted()(tree), { ...zulipHtmlOptions, allowDangerousHtml: true });
  t.equal(html, '<p><span class="katex">x</span></p>');
});

t.test('a trusted fragment is sanitized when it is made', async (t) => {
  const fragment = trustedFragment([
    { type: 'element', tagName: 'span', properties: { onClick: 'alert(1)', style: 'background:url(javascript:alert(1))' }, children: [] },
    { type: 'element', tagName: 'script', properties: {}, children: [{ type: 'text', value: 'alert(1)' }] },
  ]);
  t.equal(fragment.value, '<span></span>');
});
