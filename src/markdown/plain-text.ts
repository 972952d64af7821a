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
// - Spaces at the end of a line stay as written, before the <br> or the paragraph's end, as the full renderer
//   keeps them (two of them make no hard break in Zulip).
// - Realm linkifiers are arbitrary patterns: each paragraph, exactly the text the full renderer gives them, must
//   have no match.
import { findLinkifierMatches } from './linkifiers.js';
import type { RenderContext } from './types.js';

const DOT = 0x2e;
const HYPHEN = 0x2d;

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

/** The paragraphs of plain text (each its lines), or undefined when any line breaks the rules or there is none. */
function plainParagraphs(content: string): string[][] | undefined {
  const paragraphs: string[][] = [];
  let current: string[] | undefined;
  for (let start = 0; start <= content.length; ) {
    const newline = content.indexOf('\n', start);
    const end = newline === -1 ? content.length : newline;
    if (end === start) {
      current = undefined;
    } else {
      if (!isPlainLine(content, start, end)) return undefined;
      if (!current) paragraphs.push((current = []));
      current.push(content.slice(start, end));
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return paragraphs.length > 0 ? paragraphs : undefined;
}

/** The HTML the full renderer gives `content`, when it is plain text; otherwise undefined. */
export function renderPlainText(content: string, ctx: RenderContext): string | undefined {
  // Most messages that are not plain show it at once (a mention, a list marker...): checked before any allocation.
  if (!startsWord(content, 0)) return undefined;
  const paragraphs = plainParagraphs(content);
  if (!paragraphs) return undefined;
  if (ctx.linkifiers.length > 0) {
    for (const lines of paragraphs) {
      if (findLinkifierMatches(lines.join('\n'), ctx.linkifiers, ctx.realmUrl).length > 0) return undefined;
    }
  }
  return paragraphs.map((lines) => `<p>${lines.join('<br>\n')}</p>`).join('\n');
}
