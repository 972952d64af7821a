// Python-Markdown keeps the spaces around a paragraph's line breaks: "a  \nb" is "a  <br>\nb", "test  " keeps
// its two spaces, and a list item's continuation line keeps the indentation its nesting does not use ("* a\n
// \u0020 b" is "a<br>\n  b"). CommonMark strips them (and makes two trailing spaces a hard break), so they are
// put back from the source. Quotes are left as they are: their `>` prefixes sit between the lines.
import type { MdNode } from './tree.js';
import { text } from './tree.js';

const leadingSpaces = (line: string): number => line.length - line.trimStart().length;

/** The content column of a list item in the (list-normalized) source: its marker and one space. */
function itemContentColumn(item: MdNode, source: string): number | undefined {
  const start = item.position?.start.offset;
  if (start === undefined) return undefined;
  const lineStart = source.lastIndexOf('\n', start - 1) + 1;
  const marker = /^(?:[*+-]|\d{1,9}\.) /.exec(source.slice(start, start + 12));
  return marker ? start - lineStart + marker[0].length : undefined;
}

function restoreInText(node: MdNode, source: string, column: number): void {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  const value = node.value ?? '';
  if (start === undefined || end === undefined || !value.includes('\n')) return;
  const written = source.slice(start, end).split('\n');
  const parsed = value.split('\n');
  // Character references can make line breaks of their own; then the lines do not pair up.
  if (written.length !== parsed.length) return;
  node.value = parsed
    .map((line, i) => {
      let kept = line;
      const source = written[i]!;
      if (i > 0 && !/^\s/.test(kept)) kept = ' '.repeat(Math.max(0, leadingSpaces(source) - column)) + kept;
      if (i < parsed.length - 1 && !/\s$/.test(kept)) kept += /[ \t]*$/.exec(source)![0];
      return kept;
    })
    .join('\n');
}

function restoreInParagraph(node: MdNode, source: string, column: number): void {
  const children = node.children ?? [];
  node.children = children.map((child) => {
    if (child.type === 'text') restoreInText(child, source, column);
    else if (child.type === 'break') {
      // Two trailing spaces are no hard break in Zulip: they stay, and the line break is the usual one.
      const start = child.position?.start.offset;
      const end = child.position?.end.offset;
      const written = start === undefined || end === undefined ? '' : source.slice(start, end);
      const next = source.slice(end ?? 0).match(/^[ \t]*/)?.[0] ?? '';
      if (/^[ \t]+\n$/.test(written)) return text(written + ' '.repeat(Math.max(0, next.length - column)));
    } else if (child.children && child.type !== 'inlineCode') restoreInParagraph(child, source, column);
    return child;
  });
  // Spaces ending the paragraph stay too.
  const last = node.children[node.children.length - 1];
  const lastEnd = last?.position?.end.offset;
  const end = node.position?.end.offset;
  if (node.type === 'paragraph' && last?.type === 'text' && lastEnd !== undefined && end !== undefined) {
    const tail = source.slice(lastEnd, end);
    if (/^[ \t]+$/.test(tail)) last.value = (last.value ?? '') + tail;
  }
}

export function keepLineWhitespace(node: MdNode, source: string, column = 0): void {
  for (const child of node.children ?? []) {
    switch (child.type) {
      case 'blockquote':
        break;
      case 'paragraph':
        restoreInParagraph(child, source, column);
        break;
      case 'listItem': {
        const inner = itemContentColumn(child, source);
        if (inner !== undefined) keepLineWhitespace(child, source, inner);
        break;
      }
      default:
        keepLineWhitespace(child, source, column);
    }
  }
}
