// `*` emphasis as the real server reads it: not CommonMark's delimiter runs but three regular expressions applied
// one after the other, each to text where the inline elements found before it (code, mentions, links, bare URLs,
// linkifiers) are already opaque placeholders:
//   ***x***  strong around em   (\*\*\*)(?!\s+)([^\*^\n]+)(?<!\s)\*\*\*
//   **x**    strong             (\*\*)([^\n]+?)\*\*           (inner spaces allowed: "** a **" is bold)
//   *x*      em                 (\*)(?!\s+)([^\*^\n]+)(?<!\s)\*   (no space inside the markers; no ^ inside)
// Each pattern takes the leftmost match, replaces it with a placeholder and looks again; the text inside a match
// is then read by the later patterns only. None crosses a line break. micromark's own emphasis is switched off
// (syntax.ts), so the markers reach this pass as text.
import { MarkdownRenderingError } from './limits.js';
import { text, type MdNode } from './tree.js';

/** `*` characters one line of a text block may hold (the same bound micromark's emphasis had). */
export const MAX_STARS_PER_LINE = 1_000;

// Stands for an element (or a match made earlier) in the text the patterns read.
const PLACEHOLDER = '\uFFFC';

interface Pattern {
  regex: RegExp;
  build: (inner: MdNode[]) => MdNode;
  /** Whether the text between the markers can hold `*` (a rescan must then start from the line's start). */
  innerStars: boolean;
}

const patterns: Pattern[] = [
  {
    regex: /\*\*\*(?!\s)([^*^\n]+)(?<!\s)\*\*\*/,
    build: (inner) => ({ type: 'strong', children: [{ type: 'emphasis', children: inner }] }),
    innerStars: false,
  },
  { regex: /\*\*([^\n]+?)\*\*/, build: (inner) => ({ type: 'strong', children: inner }), innerStars: true },
  { regex: /\*(?!\s)([^*^\n]+)(?<!\s)\*/, build: (inner) => ({ type: 'emphasis', children: inner }), innerStars: false },
];

/** A run of text and elements: the string the patterns read, and the elements its placeholders stand for. */
interface Run {
  value: string;
  /** For each placeholder position in `value` that stands for an element, that element. */
  elements: Map<number, MdNode>;
}

function toRun(nodes: MdNode[]): Run {
  let value = '';
  const elements = new Map<number, MdNode>();
  for (const node of nodes) {
    if (node.type === 'text') value += node.value ?? '';
    else {
      elements.set(value.length, node);
      value += PLACEHOLDER;
    }
  }
  return { value, elements };
}

function toNodes(run: Run, from: number, to: number): MdNode[] {
  const out: MdNode[] = [];
  let textStart = from;
  // The map holds positions in increasing order (toRun adds them so): walk the elements, not the characters.
  for (const [i, element] of run.elements) {
    if (i < from) continue;
    if (i >= to) break;
    if (i > textStart) out.push(text(run.value.slice(textStart, i)));
    out.push(element);
    textStart = i + 1;
  }
  if (to > textStart) out.push(text(run.value.slice(textStart, to)));
  return out;
}

/** Applies the patterns from `first` on, in order, to a run of inline nodes; returns the new run of nodes. */
function emphasize(nodes: MdNode[], first: number): MdNode[] {
  let run = toRun(nodes);
  if (!run.value.includes('*')) return nodes;
  for (let p = first; p < patterns.length; p++) {
    const pattern = patterns[p]!;
    let from = 0;
    for (;;) {
      const rest = run.value.slice(from);
      const match = pattern.regex.exec(rest);
      if (!match) break;
      const start = from + match.index;
      const end = start + match[0].length;
      const marker = (match[0].length - match[1]!.length) / 2;
      const inner = emphasize(toNodes(run, start + marker, end - marker), p + 1);
      const replaced = [...toNodes(run, 0, start), pattern.build(inner), ...toNodes(run, end, run.value.length)];
      run = toRun(replaced);
      // A later match may start before this one only by running over it, from the `*` before it (text without
      // `*` inside), or for ** from just before it: earlier openers found no closer before this match.
      const lineStart = run.value.lastIndexOf('\n', start) + 1;
      const lastStar = run.value.lastIndexOf('*', start - 1);
      from = pattern.innerStars ? Math.max(lineStart, start - 3) : Math.max(lineStart, lastStar === -1 ? start : Math.max(0, lastStar - 2));
    }
  }
  return toNodes(run, 0, run.value.length);
}

const opaque = new Set(['inlineCode', 'code', 'zulipElement', 'zulipTrustedHtml', 'html']);

function checkBound(nodes: MdNode[]): void {
  let stars = 0;
  for (const node of nodes) {
    if (node.type !== 'text') continue;
    const value = node.value ?? '';
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c === 10) stars = 0;
      else if (c === 42 && ++stars > MAX_STARS_PER_LINE) throw new MarkdownRenderingError();
    }
  }
}

/** Applies Zulip's `*` patterns in every block of text in the tree (code and finished elements aside). */
export function applyEmphasis(node: MdNode): void {
  const children = node.children;
  if (!children || opaque.has(node.type)) return;
  for (const child of children) applyEmphasis(child);
  if (!children.some((child) => child.type === 'text' && (child.value ?? '').includes('*'))) return;
  checkBound(children);
  node.children = emphasizeLines(children);
}

/**
 * No pattern crosses a line break, so each line is read apart: a match rebuilds the run it is found in, which
 * over a whole block of many lines made the work grow with lines × matches.
 */
function emphasizeLines(nodes: MdNode[]): MdNode[] {
  const run = toRun(nodes);
  const out: MdNode[] = [];
  let pendingText = '';
  const add = (node: MdNode): void => {
    if (node.type === 'text') {
      pendingText += node.value ?? '';
      return;
    }
    if (pendingText !== '') out.push(text(pendingText));
    pendingText = '';
    out.push(node);
  };
  let nextStar = run.value.indexOf('*');
  for (let lineStart = 0; lineStart < run.value.length; ) {
    const newline = run.value.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? run.value.length : newline + 1;
    if (nextStar !== -1 && nextStar < lineStart) nextStar = run.value.indexOf('*', lineStart);
    const line = toNodes(run, lineStart, lineEnd);
    for (const part of nextStar !== -1 && nextStar < lineEnd ? emphasize(line, 0) : line) add(part);
    lineStart = lineEnd;
  }
  if (pendingText !== '') out.push(text(pendingText));
  return out;
}
