// Lists as the real server (Python-Markdown with Zulip's list processors) reads them, expressed in CommonMark's
// terms before micromark parses, plus its per-item paragraph rule after.
//
// The real server's rules:
// - an item is `*`, `-` or `+`, or digits and a dot, then at least one space; `1)` and a marker with nothing
//   after it are text;
// - a list starts with an item indented by at most one space; each further level of nesting is two more spaces
//   (so "1. B" then "  1. C" nests, where CommonMark wants the parent's content column); an item more than one
//   level deeper than the one before it is a line of that item's text;
// - all bullets, whatever their character, make one list (CommonMark starts a new list at a new character);
// - an ordered list starts at its first number, nested lists too, and an item may interrupt a paragraph with any
//   number;
// - an item line that follows a line of text, or an item of the other kind, starts a new block (a blank line is
//   put before it), but only for one-digit numbers;
// - after a blank line, text indented by two spaces per level continues the item at that level.
// normalizeLists rewrites the indentation and markers so that CommonMark builds the same tree.

import type { Element, ElementContent } from 'hast';
import type { ListItem } from 'mdast';
import type { State } from 'mdast-util-to-hast';
import type { MdNode } from './tree.js';

interface OpenItem {
  /** CommonMark content column of the item in the rewritten source. */
  col: number;
  ordered: boolean;
  bullet: string;
}

const itemLine = /^( *)([*+-]|\d{1,9}\.)( +)(.*)$/;
/** The real server's test for a line that must not hang off the line before it (one digit only). */
const hangingItem = /^ *([*+-]|\d\.) +/;
/** A marker CommonMark takes for an item and the real server does not: `1)`, or a marker alone on its line. */
const foreignItem = /^( *)(\d{1,9}\)(?: |$)|(?:[*+-]|\d{1,9}\.)$)/;
const fenceOpen = /^ *(`{3,}|~{3,})[^`~]*$/;
const quoteLine = /^ {0,3}>/;
const quoteMarker = /^ {0,3}> ?/;

function expandLeadingTabs(line: string): string {
  if (!line.startsWith('\t') && !/^ *\t/.test(line)) return line;
  let column = 0;
  let i = 0;
  for (; i < line.length && (line[i] === ' ' || line[i] === '\t'); i++) column = line[i] === '\t' ? column + 4 - (column % 4) : column + 1;
  return ' '.repeat(column) + line.slice(i);
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/**
 * Put before a list marker so that CommonMark reads the line as text; taken out of the parsed text again
 * (withoutMarkerGuards). Not a backslash: Zulip has no backslash escapes, so micromark's are off.
 */
export const MARKER_GUARD = '\uE000';

/** Guards a list marker so that CommonMark reads the line as text. */
function escapeMarker(content: string): string {
  const m = /^(\d+)([.)])/.exec(content);
  if (m) return `${m[1]}${MARKER_GUARD}${content.slice(m[1]!.length)}`;
  return /^[*+-]/.test(content) ? `${MARKER_GUARD}${content}` : content;
}

/** Takes the marker guards out of the parsed tree's text. */
export function withoutMarkerGuards(node: MdNode): void {
  if (node.type === 'text' && node.value?.includes(MARKER_GUARD)) node.value = node.value.replaceAll(MARKER_GUARD, '');
  for (const child of node.children ?? []) withoutMarkerGuards(child);
}

export interface NormalizedLists {
  source: string;
  /** Ordered lists written as "1." that start at another number: 0-based line of their first item → start. */
  listStarts: Map<number, number>;
}

/** Rewrites `source` so that CommonMark parses its lists into the tree the real server builds. */
export function normalizeLists(source: string, insideQuote = false): NormalizedLists {
  const listStarts = new Map<number, number>();
  // Nothing to do without a line that starts with a list marker, in a quote or not.
  if (!/^[ \t]*(?:>[ \t]*)*(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)/m.test(source)) return { source, listStarts };
  const out: string[] = [];
  const open: OpenItem[] = [];
  let fence: { marker: string; shift: number } | undefined;
  let code: { minIndent: number; shift: number } | undefined;
  /** Set while in a block that began after a blank line inside a list: the level its indentation reached. */
  let blockReach: number | undefined;
  let previous: string | undefined;
  let previousBlank = true;

  const reindent = (line: string, indent: number): string => ' '.repeat(Math.max(0, indent)) + line.trimStart();

  const lines = source.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!;
    const line = expandLeadingTabs(raw);
    const n = indentOf(line);
    if (fence) {
      // Fenced lines move with their fence, and are otherwise left alone.
      const closes = new RegExp(`^ *${fence.marker[0] === '`' ? '`' : '~'}{${fence.marker.length},} *$`).test(line);
      out.push(fence.shift === 0 || line.trim() === '' ? raw : reindent(line, n + fence.shift));
      if (closes) fence = undefined;
      previous = line;
      previousBlank = false;
      continue;
    }
    if (code && line.trim() !== '' && n < code.minIndent) code = undefined;
    if (code && line.trim() !== '') {
      // Indented code: moves with its first line, and is otherwise left alone.
      out.push(code.shift === 0 ? raw : reindent(line, n + code.shift));
      previous = line;
      previousBlank = false;
      continue;
    }
    if (line.trim() === '') {
      out.push(raw);
      previous = line;
      previousBlank = true;
      continue;
    }

    if (open.length === 0 && quoteLine.test(line)) {
      // A quote's lines, markers taken off, are a document of their own for the same list rules (the real
      // server's quote processor parses them with the same block processors), prefixed again after.
      let end = index;
      while (end < lines.length && quoteLine.test(expandLeadingTabs(lines[end]!))) end++;
      const inner = lines.slice(index, end).map((quoted) => expandLeadingTabs(quoted).replace(quoteMarker, ''));
      const nested = normalizeLists(inner.join('\n'), true);
      for (const [at, start] of nested.listStarts) listStarts.set(out.length + at, start);
      for (const innerLine of nested.source.split('\n')) out.push(innerLine === '' ? '>' : `> ${innerLine}`);
      previous = lines[end - 1];
      previousBlank = false;
      index = end - 1;
      continue;
    }

    // The real server puts a blank line before an item that hangs off text or off an item of the other kind,
    // as a pass over the message's lines: lines of a > quote start with ">", so there it puts none.
    const hanging = insideQuote ? null : hangingItem.exec(line);
    if (hanging && previous !== undefined && !previousBlank) {
      const before = hangingItem.exec(previous);
      if (!before || (before[1]!.length === 1) !== (hanging[1]!.length === 1)) {
        out.push('');
        previousBlank = true;
      }
    }

    const item = itemLine.exec(line);
    let level: number | undefined;
    if (item) {
      const ordered = /\d/.test(item[2]!);
      const depth = open.length;
      if (depth === 0) {
        // Without the blank line put before one-digit items, an item under a line of text is more of that text.
        const underText = !previousBlank && previous !== undefined && !/^ {0,3}(?:#|>|```|~~~)/.test(previous);
        level = n <= 1 && !underText ? 0 : undefined;
      } else if (previousBlank) {
        if (n <= 1) level = 0;
        else {
          const reach = Math.min(Math.floor(n / 2), depth);
          level = n - 2 * reach <= 1 ? reach : undefined;
        }
      } else {
        const wanted = Math.floor(n / 2);
        // Without a blank line an item cannot change kind within a list, nor skip a level.
        level = wanted <= depth && !(open[wanted] && open[wanted]!.ordered !== ordered) ? wanted : undefined;
      }
      if (level !== undefined) {
        if (level === 0 && (previousBlank || depth === 0) && open[0] && open[0].ordered !== ordered) open.length = 0;
        const indent = level === 0 ? n : open[level - 1]!.col;
        const same = open[level] && open[level]!.ordered === ordered ? open[level] : undefined;
        let marker = ordered ? item[2]! : (same?.bullet ?? item[2]!);
        const number = Number(item[2]!.slice(0, -1));
        if (ordered && !same && !previousBlank && level > 0 && number !== 1) {
          // CommonMark lets only "1." start a list under a line of text; the real number is put back as the
          // list's start after parsing.
          listStarts.set(out.length, number);
          marker = '1.';
        }
        open.length = level;
        open.push({ col: indent + marker.length + 1, ordered, bullet: marker });
        blockReach = undefined;
        out.push(`${' '.repeat(indent)}${marker} ${item[4]}`);
        previous = line;
        previousBlank = false;
        continue;
      }
    }

    // Not an item: text, a fence or another block. `relative` is its indentation within the item it belongs to.
    let indent = n;
    let relative = n;
    // A fence at the line's start is a block of the message itself: the real server takes fences out first.
    if (n === 0 && fenceOpen.test(line)) open.length = 0;
    if (open.length > 0) {
      if (previousBlank && n <= 1) {
        open.length = 0;
        blockReach = undefined;
      } else if (previousBlank) {
        const reach = Math.min(Math.floor(n / 2), open.length);
        open.length = reach;
        relative = n - 2 * reach;
        indent = open[reach - 1]!.col + relative;
        blockReach = reach;
      } else if (blockReach !== undefined) {
        // A later line of a block that began after a blank line: the real server takes the same two spaces a
        // level off each of its lines.
        relative = 0;
        indent = open[blockReach - 1]!.col + Math.max(0, n - 2 * blockReach);
      } else {
        // A line of the deepest item's text; the real server keeps what indentation its levels do not use.
        const deepest = open.length - 1;
        relative = 0;
        indent = open[deepest]!.col + Math.max(0, n - 2 * deepest);
      }
    }
    // A marker CommonMark would take for an item is escaped, unless the line is indented code there.
    let text = line.trimStart();
    if (previousBlank && relative >= 4) code = { minIndent: n - relative + 4, shift: indent - n };
    else if (item || foreignItem.test(line)) text = escapeMarker(text);
    const fenceMatch = fenceOpen.exec(line);
    if (fenceMatch) fence = { marker: fenceMatch[1]!, shift: indent - n };
    out.push(indent === n && text === line.trimStart() ? raw : ' '.repeat(indent) + text);
    previous = line;
    previousBlank = false;
  }
  return { source: out.join('\n'), listStarts };
}

/** Puts back the start numbers normalizeLists took off nested ordered lists. */
export function restoreListStarts(node: MdNode, listStarts: ReadonlyMap<number, number>): void {
  if (listStarts.size === 0) return;
  for (const child of node.children ?? []) restoreListStarts(child, listStarts);
  const line = (node.position?.start as { line?: number } | undefined)?.line;
  if (node.type === 'list' && node.ordered && line !== undefined && listStarts.has(line - 1)) node.start = listStarts.get(line - 1)!;
}

// A line of nothing but quote markers is a blank line inside the quote.
const blankBetween = (source: string, from: number | undefined, to: number | undefined): boolean =>
  from !== undefined && to !== undefined && /\n[ \t>]*\n/.test(source.slice(from, to));

/**
 * Python-Markdown wraps an item's text in <p> item by item, not list by list: an item next to a blank line that
 * separates it from the item before or after it, or whose own blocks are separated by a blank line, gets
 * paragraphs; the items in between do not (`* a\n\n* b\n* c` wraps a and b only). Sets each item's `spread` so;
 * listItemToHast reads it.
 */
export function settleItemParagraphs(node: MdNode, source: string): void {
  for (const child of node.children ?? []) settleItemParagraphs(child, source);
  if (node.type !== 'list' || !node.children) return;
  const items = node.children;
  const own = items.map((item) => item.spread === true);
  items.forEach((item, i) => {
    const before = items[i - 1];
    const after = items[i + 1];
    item.spread =
      own[i] ||
      (before !== undefined && blankBetween(source, before.position?.end.offset, item.position?.start.offset)) ||
      (after !== undefined && blankBetween(source, item.position?.end.offset, after.position?.start.offset));
  });
  node.spread = false;
}

/** remark-rehype handler for list items: whether text is wrapped in <p> is the item's own `spread`. */
export function listItemToHast(state: State, node: ListItem): Element {
  const children: ElementContent[] = [];
  for (const child of state.all(node)) {
    if (!node.spread && child.type === 'element' && child.tagName === 'p') children.push(...child.children);
    else children.push(child);
  }
  const result: Element = { type: 'element', tagName: 'li', properties: {}, children };
  state.patch(node, result);
  return state.applyData(node, result);
}
