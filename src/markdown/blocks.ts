// Fenced blocks with a meaning beyond code: ```quote, ```spoiler Header, ```math; everything else is a
// code block in Zulip's codehilite wrapper.
import { canonicalLanguageName } from './code-language.js';
import { renderDisplayMath } from './math.js';
import { MarkdownRenderingError, MAX_FENCE_DEPTH, newRenderBudget, spend, type RenderBudget } from './limits.js';
import { parseMarkdown } from './parse.js';
import { container, h, hastElement, hText, rewrite, type MdNode } from './tree.js';

/**
 * Parses `source` and expands its special blocks, recursively (quotes and spoilers hold Markdown, parsed again
 * at each level): the fence depth and the characters parsed in all are bounded, so nesting cannot make the
 * work grow faster than the message.
 */
export function parseWithBlocks(source: string, budget: RenderBudget = newRenderBudget(source), fenceDepth = 0): MdNode {
  if (fenceDepth > MAX_FENCE_DEPTH) throw new MarkdownRenderingError();
  spend(budget, source.length);
  const tree = parseMarkdown(source);
  rewrite(tree, (node) => (node.type === 'code' ? renderFence(node, (inner) => parseWithBlocks(inner, budget, fenceDepth + 1)) : undefined));
  return tree;
}

function renderFence(node: MdNode, parseWithBlocks: (source: string) => MdNode): MdNode[] {
  const lang = (node.lang ?? '').toLowerCase();
  const value = node.value ?? '';
  switch (lang) {
    case 'quote':
    case 'quoted':
      return [{ type: 'blockquote', children: parseWithBlocks(value).children ?? [] }];
    case 'spoiler':
      return [
        container('div', { className: ['spoiler-block'] }, [
          container('div', { className: ['spoiler-header'] }, parseWithBlocks(node.meta ?? '').children ?? []),
          container('div', { className: ['spoiler-content'], ariaHidden: 'true' }, parseWithBlocks(value).children ?? []),
        ]),
      ];
    case 'math':
      // Each paragraph of a math block is an equation of its own, as on the real server.
      return value.split('\n\n').map(renderDisplayMath);
    default:
      return [codeBlock(value, node.lang ?? undefined)];
  }
}

/** `<div class="codehilite" data-code-language="Python"><pre><span></span><code>…</code></pre></div>` */
export function codeBlock(value: string, lang: string | undefined): MdNode {
  // Like Pygments: no trailing whitespace on lines, no blank lines around the code, one final newline.
  const lines = value.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const code = lines.join('\n') + '\n';
  const properties = lang ? { className: ['codehilite'], dataCodeLanguage: canonicalLanguageName(lang) } : { className: ['codehilite'] };
  return hastElement('div', properties, [h('pre', {}, [h('span', {}), h('code', {}, [hText(code)])])]);
}
