// Markdown source → mdast in Zulip's dialect, with the fixes that need the source text itself.
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmTable } from 'micromark-extension-gfm-table';
import { combineExtensions } from 'micromark-util-combine-extensions';
import remarkParse from 'remark-parse';
import { unified, type Processor } from 'unified';
import type { Root } from 'mdast';
import type { Extension } from 'micromark-util-types';
import './linear-edit-map.js';
import { zulipStrikethrough, zulipStrikethroughWithGfmResolver } from './delimiter-runs.js';
import { containerDepthBound, MarkdownRenderingError, MAX_CONTAINER_DEPTH, MAX_TREE_DEPTH, treeDepth } from './limits.js';
import { pairFencesLikeZulip } from './fences.js';
import { silenceQuotedMentions } from './quote-mentions.js';
import { mergedLabels } from './labels.js';
import { keepLineWhitespace } from './line-whitespace.js';
import { parseSplittingLongTables, type SplitOptions } from './long-tables.js';
import { MARKER_GUARD, normalizeLists, restoreListStarts, settleItemParagraphs, withoutMarkerGuards } from './lists.js';
import { zulipFromMarkdown, zulipMicromark } from './syntax.js';
import { rewrite, text, type MdNode } from './tree.js';
import { decodeCharacterReferences, safeHref } from './urls.js';

/** Options of `remarkZulipSyntax`. */
export interface ZulipSyntaxOptions {
  /** Whether a line may start a GFM table (default true). */
  tables?: boolean;
  /**
   * Whether unmatched brackets' text is merged into the data around it (labels.ts; default true). False gives
   * micromark's own label constructs, for tests that check the merge changes no tree.
   */
  mergeLabelData?: boolean;
  /**
   * Whether `~~` pairs are resolved in one pass (delimiter-runs.ts; default true). False gives GFM's resolver, for
   * tests that check the one pass changes no tree.
   */
  oneStrikethroughPass?: boolean;
}

const combine = (tables: boolean, mergeLabelData: boolean, oneStrikethroughPass = true): Extension =>
  combineExtensions([
    oneStrikethroughPass ? zulipStrikethrough() : zulipStrikethroughWithGfmResolver(),
    ...(tables ? [gfmTable()] : []),
    zulipMicromark,
    ...(mergeLabelData ? [mergedLabels] : []),
  ]);

// Combined once: micromark combines the extensions it is given on every parse, which for four extensions was a
// tenth of a typical message's rendering time. Combining them ahead gives the same construct lists (each
// extension's constructs go before the earlier ones, or after with `add: 'after'`, either way).
const zulipSyntax = combine(true, true);
const zulipSyntaxWithoutTables = combine(false, true);

/** unified plugin: Zulip's syntax extensions for remark-parse. */
export function remarkZulipSyntax(this: Processor, options: ZulipSyntaxOptions = {}): void {
  const data = this.data();
  const tables = options.tables !== false;
  const merged = tables ? zulipSyntax : zulipSyntaxWithoutTables;
  const syntax =
    options.mergeLabelData === false || options.oneStrikethroughPass === false
      ? combine(tables, options.mergeLabelData !== false, options.oneStrikethroughPass !== false)
      : merged;
  (data.micromarkExtensions ??= []).push(syntax);
  (data.fromMarkdownExtensions ??= []).push(gfmStrikethroughFromMarkdown(), gfmTableFromMarkdown(), zulipFromMarkdown);
}

const parser = unified().use(remarkParse).use(remarkZulipSyntax).freeze();
// The table construct is tried at the start of every line; most messages cannot hold a table at all.
const parserWithoutTables = unified().use(remarkParse).use(remarkZulipSyntax, { tables: false }).freeze();
const parseWithTables = (source: string): MdNode => parser.parse(source) as Root as unknown as MdNode;
/** A table's delimiter row has a `|`, or a `:` against a `-` (":-", "-:"): without both, no line starts one. */
const mayHoldTable = (source: string): boolean => source.includes('|') || source.includes(':-') || source.includes('-:');

const sourceOf = (node: MdNode, source: string): string | undefined => {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  return start === undefined || end === undefined ? undefined : source.slice(start, end);
};


function containsLineBreak(node: MdNode): boolean {
  if (node.type === 'text') return (node.value ?? '').includes('\n');
  return (node.children ?? []).some(containsLineBreak);
}

/**
 * Parses one Markdown document (a message, or the inside of a quote or spoiler block). `tables` is for tests
 * that compare long tables' fast path with the parse it stands for.
 */
export function parseMarkdown(original: string, tables: SplitOptions = {}): MdNode {
  // Checked before parsing: micromark's work per line grows with the containers open on it.
  if (containerDepthBound(original) > MAX_CONTAINER_DEPTH) throw new MarkdownRenderingError();
  // Positions in the tree refer to this rewritten text.
  const { source, listStarts } = normalizeLists(pairFencesLikeZulip(silenceQuotedMentions(original)));
  const tree = mayHoldTable(source) ? parseSplittingLongTables(parseWithTables, source, tables) : (parserWithoutTables.parse(source) as Root as unknown as MdNode);
  // Checked before anything walks the tree recursively (inline nesting such as emphasis runs counts too).
  if (treeDepth(tree) > MAX_TREE_DEPTH) throw new MarkdownRenderingError();
  fixSourceDependent(tree, source);
  fixBareQuoteMarkers(tree, source);
  restoreListStarts(tree, listStarts);
  settleItemParagraphs(tree, source);
  keepLineWhitespace(tree, source);
  if (source.includes(MARKER_GUARD)) withoutMarkerGuards(tree);
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
  // A new list only from the first bare quote on: most child lists have none.
  let out: MdNode[] | undefined;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    fixBareQuoteMarkers(child, source);
    const raw = child.type === 'blockquote' && child.children?.length === 0 ? sourceOf(child, source) : undefined;
    if (raw === undefined) {
      out?.push(child);
      continue;
    }
    out ??= children.slice(0, i);
    // Text right under the markers is the quote's (it is not "up to the end of the block").
    const next = children[i + 1];
    if (next?.type === 'paragraph' && onNextLine(source, child, next)) {
      child.children = [next];
      out.push(child);
      i++;
      continue;
    }
    const markers = raw.replace(/^[ \t]+/, '');
    const previous = out[out.length - 1];
    if (previous?.type === 'paragraph' && onNextLine(source, previous, child)) {
      (previous.children ??= []).push(text(`\n${markers}`));
      continue;
    }
    out.push({ type: 'paragraph', children: [text(markers)], position: child.position });
  }
  if (out) parent.children = out;
}

/** Whether `after` starts on the line right after `before` ends. */
function onNextLine(source: string, before: MdNode | undefined, after: MdNode | undefined): boolean {
  const end = before?.position?.end.offset;
  const start = after?.position?.start.offset;
  return end !== undefined && start !== undefined && /^\n[ \t]*$/.test(source.slice(end, start));
}

/** The code span's text between its backtick fences (a loop: /`+$/ is quadratic on many backtick runs). */
function stripBackticks(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && raw[start] === '`') start++;
  while (end > start && raw[end - 1] === '`') end--;
  return raw.slice(start, end);
}

/** Inline code nodes inside list items. */
function codeInItems(node: MdNode, inItem = false, out = new Set<MdNode>()): Set<MdNode> {
  if (inItem && node.type === 'inlineCode') out.add(node);
  for (const child of node.children ?? []) codeInItems(child, inItem || node.type === 'listItem', out);
  return out;
}

function fixSourceDependent(tree: MdNode, source: string): void {
  const inItems = source.includes('`') ? codeInItems(tree) : new Set<MdNode>();
  rewrite(tree, (node) => {
    switch (node.type) {
      case 'inlineCode': {
        // Zulip keeps what is between the backticks as typed: spaces ("`` a ``" is " a ") and line breaks, less
        // the quote markers of the lines it runs over.
        const raw = sourceOf(node, source);
        // (In a list item the rewritten source has the item's lines moved: there the parsed value stands.)
        if (raw !== undefined && !(raw.includes('\n') && inItems.has(node))) {
          node.value = stripBackticks(raw.includes('\n') ? raw.replace(/\n {0,3}(?:> ?)+/g, '\n') : raw);
        }
        return [node];
      }
      case 'link':
      case 'image': {
        node.url = decodeCharacterReferences(node.url ?? '');
        // A link to a target Zulip does not allow stays literal text (which may still hold bare URLs).
        if (safeHref(node.url, '') === undefined) return [text(sourceOf(node, source) ?? '')];
        if (node.type === 'image') {
          return [{ type: 'link', url: node.url ?? '', title: null, children: node.alt ? [text(node.alt)] : [] }];
        }
        return undefined;
      }
      case 'delete': {
        // Strikethrough never spans lines in Zulip: the markers stay as typed. (`*` emphasis is emphasis.ts's.)
        if (!containsLineBreak(node)) return undefined;
        fixSourceDependent(node, source);
        return [text('~~'), ...(node.children ?? []), text('~~')];
      }
      default:
        return undefined;
    }
  });
}
