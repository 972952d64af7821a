// Markdown source → mdast in Zulip's dialect, with the fixes that need the source text itself.
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmTable } from 'micromark-extension-gfm-table';
import remarkParse from 'remark-parse';
import { unified, type Processor } from 'unified';
import type { Root } from 'mdast';
import { boundedEmphasis, boundedStrikethrough } from './delimiter-runs.js';
import { containerDepthBound, MarkdownRenderingError, MAX_CONTAINER_DEPTH, MAX_TREE_DEPTH, treeDepth } from './limits.js';
import { pairFencesLikeZulip } from './fences.js';
import { keepLineWhitespace } from './line-whitespace.js';
import { normalizeLists, restoreListStarts, settleItemParagraphs } from './lists.js';
import { zulipFromMarkdown, zulipMicromark } from './syntax.js';
import { rewrite, text, type MdNode } from './tree.js';
import { safeHref } from './urls.js';

/** unified plugin: Zulip's syntax extensions for remark-parse. */
export function remarkZulipSyntax(this: Processor): void {
  const data = this.data();
  (data.micromarkExtensions ??= []).push(boundedStrikethrough(), gfmTable(), zulipMicromark, boundedEmphasis);
  (data.fromMarkdownExtensions ??= []).push(gfmStrikethroughFromMarkdown(), gfmTableFromMarkdown(), zulipFromMarkdown);
}

const parser = unified().use(remarkParse).use(remarkZulipSyntax).freeze();

const sourceOf = (node: MdNode, source: string): string | undefined => {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  return start === undefined || end === undefined ? undefined : source.slice(start, end);
};

const emphasisMarkers: Record<string, string> = { strong: '**', emphasis: '*', delete: '~~' };

function containsLineBreak(node: MdNode): boolean {
  if (node.type === 'text') return (node.value ?? '').includes('\n');
  return (node.children ?? []).some(containsLineBreak);
}

/** Parses one Markdown document (a message, or the inside of a quote or spoiler block). */
export function parseMarkdown(original: string): MdNode {
  // Checked before parsing: micromark's work per line grows with the containers open on it.
  if (containerDepthBound(original) > MAX_CONTAINER_DEPTH) throw new MarkdownRenderingError();
  // Positions in the tree refer to this rewritten text.
  const { source, listStarts } = normalizeLists(pairFencesLikeZulip(original));
  const tree = parser.parse(source) as Root as unknown as MdNode;
  // Checked before anything walks the tree recursively (inline nesting such as emphasis runs counts too).
  if (treeDepth(tree) > MAX_TREE_DEPTH) throw new MarkdownRenderingError();
  fixSourceDependent(tree, source);
  fixBareQuoteMarkers(tree, source);
  restoreListStarts(tree, listStarts);
  settleItemParagraphs(tree, source);
  keepLineWhitespace(tree, source);
  return tree;
}

/**
 * In Zulip a quote needs a line with something after its `>`: lines of bare `>` markers up to the end of their
 * block are paragraph text (`>` alone is "<p>&gt;</p>", `>>>>>` is four quotes around "&gt;"), and such lines
 * right under a paragraph continue it. CommonMark parses them as empty quotes, which this turns back.
 */
function fixBareQuoteMarkers(parent: MdNode, source: string): void {
  if (!parent.children) return;
  const children = parent.children;
  const out: MdNode[] = [];
  // Whether `after` starts on the line right after `before` ends.
  const adjacent = (before: MdNode | undefined, after: MdNode | undefined): boolean => {
    const end = before?.position?.end.offset;
    const start = after?.position?.start.offset;
    return end !== undefined && start !== undefined && /^\n[ \t]*$/.test(source.slice(end, start));
  };
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    fixBareQuoteMarkers(child, source);
    const raw = child.type === 'blockquote' && child.children?.length === 0 ? sourceOf(child, source) : undefined;
    if (raw === undefined) {
      out.push(child);
      continue;
    }
    // Text right under the markers is the quote's (it is not "up to the end of the block").
    const next = children[i + 1];
    if (next?.type === 'paragraph' && adjacent(child, next)) {
      child.children = [next];
      out.push(child);
      i++;
      continue;
    }
    const markers = raw.replace(/^[ \t]+/, '');
    const previous = out[out.length - 1];
    if (previous?.type === 'paragraph' && adjacent(previous, child)) {
      (previous.children ??= []).push(text(`\n${markers}`));
      continue;
    }
    out.push({ type: 'paragraph', children: [text(markers)], position: child.position });
  }
  parent.children = out;
}

/** The code span's text between its backtick fences (a loop: /`+$/ is quadratic on many backtick runs). */
function stripBackticks(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && raw[start] === '`') start++;
  while (end > start && raw[end - 1] === '`') end--;
  return raw.slice(start, end);
}

/** `***foo***` is strong around emphasis in Zulip (CommonMark nests them the other way round). */
function strongOutside(node: MdNode, source: string): void {
  const inner = node.children?.length === 1 ? node.children[0] : undefined;
  const raw = sourceOf(node, source);
  if (inner?.type !== 'strong' || raw === undefined || !raw.startsWith('***') || !raw.endsWith('***')) return;
  node.type = 'strong';
  inner.type = 'emphasis';
}

function fixSourceDependent(tree: MdNode, source: string): void {
  rewrite(tree, (node) => {
    switch (node.type) {
      case 'inlineCode': {
        // Zulip keeps the spaces inside backticks ("`` a ``" is " a ").
        const raw = sourceOf(node, source);
        if (raw !== undefined && !raw.includes('\n')) node.value = stripBackticks(raw);
        return [node];
      }
      case 'link':
      case 'image': {
        // A link to a target Zulip does not allow stays literal text (which may still hold bare URLs).
        if (safeHref(node.url ?? '', '') === undefined) return [text(sourceOf(node, source) ?? '')];
        if (node.type === 'image') {
          return [{ type: 'link', url: node.url ?? '', title: null, children: node.alt ? [text(node.alt)] : [] }];
        }
        return undefined;
      }
      case 'strong':
      case 'emphasis':
      case 'delete': {
        // Emphasis never spans lines in Zulip: the markers stay as typed.
        if (!containsLineBreak(node)) {
          if (node.type === 'emphasis') strongOutside(node, source);
          return undefined;
        }
        const marker = emphasisMarkers[node.type] ?? '';
        fixSourceDependent(node, source);
        return [text(marker), ...(node.children ?? []), text(marker)];
      }
      default:
        return undefined;
    }
  });
}
