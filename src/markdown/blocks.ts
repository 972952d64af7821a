// Fenced blocks with a meaning beyond code: ```quote, ```spoiler Header, ```math; everything else is a
// code block in Zulip's codehilite wrapper.
import { codeHeader } from './code-header.js';
import { codeMarker, type PendingCodeBlock } from './code-highlight.js';
import { canonicalLanguageName, highlightable } from './code-language.js';
import { renderDisplayMath } from './math.js';
import { MarkdownRenderingError, MAX_FENCE_DEPTH, newRenderBudget, spend, type RenderBudget } from './limits.js';
import type { SplitOptions } from './long-tables.js';
import { parseMarkdown } from './parse.js';
import { silenceQuotedMentions } from './quote-mentions.js';
import { container, h, hastElement, hText, rewrite, type MdNode } from './tree.js';

export interface BlockEnvironment {
  budget: RenderBudget;
  /** Code blocks to highlight once rendered, in the order of their markers. */
  codeBlocks: PendingCodeBlock[];
  /** The realm's language for fenced blocks that name none (not inside a spoiler, as on the real server). */
  defaultLanguage?: string;
  /** How long tables are parsed (long-tables.ts); the default outside tests. */
  tables?: SplitOptions;
}

/**
 * Parses `source` and expands its special blocks, recursively (quotes and spoilers hold Markdown, parsed again
 * at each level): the fence depth and the characters parsed in all are bounded, so nesting cannot make the
 * work grow faster than the message.
 */
export function parseWithBlocks(
  source: string,
  env: BlockEnvironment = { budget: newRenderBudget(source), codeBlocks: [] },
  fenceDepth = 0,
): MdNode {
  if (fenceDepth > MAX_FENCE_DEPTH) throw new MarkdownRenderingError();
  spend(env.budget, source.length);
  const tree = parseMarkdown(source, env.tables);
  rewrite(tree, (node) => {
    if (node.type !== 'code') return undefined;
    const fenced = source.charAt(node.position?.start.offset ?? -1).match(/[`~]/) !== null;
    return renderFence(node, fenced, env, (inner, innerEnv = env) => parseWithBlocks(inner, innerEnv, fenceDepth + 1));
  });
  return tree;
}

function renderFence(node: MdNode, fenced: boolean, env: BlockEnvironment, parseWithBlocks: (source: string, env?: BlockEnvironment) => MdNode): MdNode[] {
  const value = node.value ?? '';
  // A fenced block without a single line inside it (closed at once, or opened on the last line) is dropped, as
  // on the real server (indented code is never empty).
  const { start, end } = node.position ?? { start: {}, end: {} };
  if (value === '' && start.line !== undefined && end.line !== undefined && end.line - start.line <= 1) return [];
  const written = fenced ? node.lang || env.defaultLanguage || undefined : undefined;
  const lang = (written ?? '').toLowerCase();
  switch (lang) {
    case 'quote':
    case 'quoted':
      return [{ type: 'blockquote', children: parseWithBlocks(silenceQuotedMentions(value, true)).children ?? [] }];
    case 'spoiler':
      return [
        container('div', { className: ['spoiler-block'] }, [
          container('div', { className: ['spoiler-header'] }, parseWithBlocks(node.meta ?? '').children ?? []),
          container('div', { className: ['spoiler-content'], ariaHidden: 'true' }, parseWithBlocks(value, { ...env, defaultLanguage: undefined }).children ?? []),
        ]),
      ];
    case 'math':
      // Each paragraph of a math block is an equation of its own, as on the real server.
      return value.split('\n\n').map(renderDisplayMath);
    default:
      return [codeBlock(value, written, fenced, env.codeBlocks)];
  }
}

/**
 * `<div class="codehilite" data-code-language="Python"><pre><span></span><code>…</code></pre></div>`; a block
 * Pygments can highlight gets a marker for its code and joins `pending` (see code-highlight.ts).
 */
export function codeBlock(value: string, lang: string | undefined, fenced: boolean, pending: PendingCodeBlock[]): MdNode {
  // Like Pygments: no trailing whitespace on lines, no blank lines around the code, one final newline.
  const lines = value.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let code = lines.join('\n');
  let request: PendingCodeBlock | undefined;
  if (lang) {
    if (highlightable(lang)) request = { lang: lang.toLowerCase(), code };
  } else {
    const header = codeHeader(code, fenced);
    if (header) {
      code = header.code;
      if (highlightable(header.lang) || header.hlLines.length > 0) request = { lang: header.lang, code, hlLines: header.hlLines };
    }
  }
  let content = code + '\n';
  if (request) {
    content = codeMarker(pending.length);
    pending.push(request);
  }
  const properties = lang ? { className: ['codehilite'], dataCodeLanguage: canonicalLanguageName(lang) } : { className: ['codehilite'] };
  return hastElement('div', properties, [h('pre', {}, [h('span', {}), h('code', {}, [hText(content)])])]);
}
