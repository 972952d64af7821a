// Most chat messages are a line or two of words and punctuation. For text in which no Markdown or Zulip rule can
// find anything, the rendering is known without parsing: paragraphs at blank lines, a <br> at every other line
// break. Skipping the parse also skips most of a render's allocation, and so most of the garbage collections that
// set the tail of rendering times (issue 19). The rules below accept only such text; anything else returns
// undefined and takes the full renderer.
//
// Why each rule is enough:
// - Characters: letters of any script (Unicode L, which holds no emoji), ASCII digits, space and `,.?!'"-/%+=`.
//   Every inline construct (emphasis, strikethrough, code, links, images, autolinks, HTML, entities, escapes,
//   mentions, channel links, times, math, tables, emoji names, emoticons, emoji characters) needs a character
//   outside that set, and none of them needs an HTML escape.
// - A `.` followed by a letter, digit or `-` could make a domain ("example.com", "日本.中国"): refused. Protocol
//   URLs need `:` and addresses `@`, both outside the set.
// - A line starts with a letter or digit, and one starting with digits has no `.` right after them: no list,
//   quote, heading, fence, thematic break, setext underline or indented code can start, and a line of spaces
//   (a blank line to Markdown, not to this code) cannot occur.
// - Or a line is a list item: `-`, `*` or `+`, or a number and `.`, then one space and a line of the kind above (so
//   no nested list, thematic break or indented code inside it). Consecutive items are one tight list (bullets of
//   mixed markers too, as in Zulip; a numbered list starts at its first number); items may follow paragraph lines
//   directly. What would make a list loose (items apart) or continue an item (a line after it) is left to the
//   parser.
// - Or a block is a pipe table whose cells are such text or empty (plain-tables.ts).
// - Spaces at the end of a line stay as written, before the <br> or the paragraph's end, as the full renderer
//   keeps them (two of them make no hard break in Zulip).
// - Realm linkifiers are arbitrary patterns: each paragraph, exactly the text the full renderer gives them, must
//   have no match.
import { findLinkifierMatches } from './linkifiers.js';
import { plainTable, tableHtml, tableTexts, type PlainTable } from './plain-tables.js';
import type { RenderContext } from './types.js';

const DOT = 0x2e;
const HYPHEN = 0x2d;
const ASTERISK = 0x2a;
const PLUS = 0x2b;
const SPACE = 0x20;
const ZERO = 0x30;
const PIPE = 0x7c;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

/** ASCII codes allowed anywhere in a line. */
const allowed = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (isDigit(c) || isLetter(c)) allowed[c] = 1;
for (const c of ` ,.?!'"-/%+=`) allowed[c.charCodeAt(0)] = 1;

const otherLetter = /\p{L}/u;

/** The length in code units (1 or 2) of the letter at `i`, any script's, or 0 when there is none. */
function letterAt(content: string, i: number): number {
  if (i >= content.length) return 0;
  const c = content.charCodeAt(i);
  if (c < 128) return isLetter(c) ? 1 : 0;
  const point = content.codePointAt(i)!;
  return otherLetter.test(String.fromCodePoint(point)) ? (point > 0xffff ? 2 : 1) : 0;
}

/**
 * The length in code units (1 or 2) of the character at `i` when it is one of those allowed anywhere in a line,
 * or 0. No construct of the parser (micromark with Zulip's extensions) starts at such a character; long-tables.ts
 * relies on that. (Domains are found later, in the text, and need the `.` refused below.)
 */
export function plainCharLength(content: string, i: number): number {
  const c = content.charCodeAt(i);
  return c < 128 ? allowed[c]! : letterAt(content, i);
}

const startsWord = (content: string, i: number): boolean => letterAt(content, i) > 0 || isDigit(content.charCodeAt(i));

/** Whether the line [start, end) keeps to the rules above (it is not empty). */
function isPlainLine(content: string, start: number, end: number): boolean {
  if (!startsWord(content, start)) return false;
  let i = start;
  while (i < end && isDigit(content.charCodeAt(i))) i++;
  if (i > start && content.charCodeAt(i) === DOT) return false;
  while (i < end) {
    const length = plainCharLength(content, i);
    if (length === 0) return false;
    if (content.charCodeAt(i) === DOT && (startsWord(content, i + 1) || content.charCodeAt(i + 1) === HYPHEN)) return false;
    i += length;
  }
  return true;
}

/** A list item's marker: `-`, `*` or `+`, or a number (its value) and `.`; `text` is where the item's text starts. */
type Marker = { kind: 'bullet'; text: number } | { kind: 'number'; value: number; text: number };

/**
 * The marker of the list item on the line [start, end) when the line is one: the marker, one space, then a line of
 * plain text. A number has one to nine digits and no leading zero (Zulip takes "01." apart).
 */
function plainItemMarker(content: string, start: number, end: number): Marker | undefined {
  const first = content.charCodeAt(start);
  let marker: Marker | undefined;
  if (first === HYPHEN || first === ASTERISK || first === PLUS) {
    marker = { kind: 'bullet', text: start + 2 };
  } else if (isDigit(first)) {
    let i = start + 1;
    while (i < end && i - start < 10 && isDigit(content.charCodeAt(i))) i++;
    if (content.charCodeAt(i) !== DOT || i - start > 9 || (first === ZERO && i - start > 1)) return undefined;
    marker = { kind: 'number', value: Number(content.slice(start, i)), text: i + 2 };
  }
  if (marker === undefined || content.charCodeAt(marker.text - 1) !== SPACE || !isPlainLine(content, marker.text, end)) return undefined;
  return marker;
}

/** A paragraph (its lines) or a tight list (its items' text, and the first number of a numbered one). */
type TextBlock = { kind: 'paragraph' | 'bullet' | 'number'; lines: string[]; start?: number };
type PlainBlock = TextBlock | PlainTable;

const isPlainText = (text: string): boolean => isPlainLine(text, 0, text.length);

/** The lines from `start` up to the next blank line or the end, and the offset after them. */
function linesOfBlock(content: string, start: number): { lines: string[]; next: number } {
  const blank = content.indexOf('\n\n', start);
  // A line break at the very end ends the last line, like a blank line.
  const end = blank !== -1 ? blank : content.endsWith('\n') ? content.length - 1 : content.length;
  return { lines: content.slice(start, end).split('\n'), next: end };
}

/**
 * The blocks of plain text, or undefined when any line breaks the rules or there is none. Within a run of lines
 * without a blank one, paragraph lines may come first and list items after them, and a bulleted list and a
 * numbered one (from a one-digit number) follow each other as two lists. An item's next line would continue it,
 * and a list after a blank line would join the one before it as a loose list, so both are left to the parser. A
 * table (plain-tables.ts) starts a block and runs to the next blank line.
 */
function plainBlocks(content: string): PlainBlock[] | undefined {
  const blocks: PlainBlock[] = [];
  // The paragraph or list the next line may join (a table is never continued).
  let current: TextBlock | undefined;
  // Whether the line before is an item numbered with more than one digit.
  let afterLongNumber = false;
  for (let start = 0; start <= content.length; ) {
    const newline = content.indexOf('\n', start);
    const end = newline === -1 ? content.length : newline;
    if (end === start) {
      current = undefined;
      afterLongNumber = false;
    } else if (current === undefined && content.charCodeAt(start) === PIPE) {
      // A table is a block of its own, up to the next blank line.
      const { lines, next } = linesOfBlock(content, start);
      const table = plainTable(lines, isPlainText);
      if (!table) return undefined;
      blocks.push(table);
      if (next >= content.length) break;
      start = next;
      continue;
    } else if (isPlainLine(content, start, end)) {
      afterLongNumber = false;
      if (current !== undefined && current.kind !== 'paragraph') return undefined;
      if (!current) blocks.push((current = { kind: 'paragraph', lines: [] }));
      current.lines.push(content.slice(start, end));
    } else {
      const marker = plainItemMarker(content, start, end);
      if (marker === undefined) return undefined;
      // Zulip puts a blank line before a one-digit item under such a line, which makes the list a loose one.
      if (afterLongNumber && marker.kind === 'number' && marker.value <= 9) return undefined;
      afterLongNumber = marker.kind === 'number' && marker.value > 9;
      if (current?.kind !== marker.kind) {
        if (!current && blocks.length > 0 && blocks[blocks.length - 1]!.kind !== 'paragraph') return undefined;
        // Right under another line, Zulip starts a numbered list only at a one-digit number.
        if (current && marker.kind === 'number' && marker.value > 9) return undefined;
        blocks.push((current = { kind: marker.kind, lines: [], start: marker.kind === 'number' ? marker.value : undefined }));
      }
      current.lines.push(content.slice(marker.text, end));
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return blocks.length > 0 ? blocks : undefined;
}

function blockHtml(block: PlainBlock): string {
  if (block.kind === 'table') return tableHtml(block);
  if (block.kind === 'paragraph') return `<p>${block.lines.join('<br>\n')}</p>`;
  const open = block.kind === 'bullet' ? '<ul>' : block.start === 1 ? '<ol>' : `<ol start="${block.start}">`;
  return `${open}\n${block.lines.map((item) => `<li>${item}</li>`).join('\n')}\n</${block.kind === 'bullet' ? 'ul' : 'ol'}>`;
}

/** The HTML the full renderer gives `content`, when it is plain text; otherwise undefined. */
export function renderPlainText(content: string, ctx: RenderContext): string | undefined {
  // Most messages that are not plain show it at once (a mention, a quote...): checked before any allocation.
  const first = content.charCodeAt(0);
  if (!startsWord(content, 0) && first !== HYPHEN && first !== ASTERISK && first !== PLUS && first !== PIPE) return undefined;
  const blocks = plainBlocks(content);
  if (!blocks) return undefined;
  if (ctx.linkifiers.length > 0) {
    // Each paragraph, each item and each table cell is a text of its own to the linkifiers.
    const texts = blocks.flatMap((block) => (block.kind === 'table' ? tableTexts(block) : block.kind === 'paragraph' ? [block.lines.join('\n')] : block.lines));
    if (texts.some((text) => findLinkifierMatches(text, ctx.linkifiers, ctx.realmUrl).length > 0)) return undefined;
  }
  return blocks.map(blockHtml).join('\n');
}
