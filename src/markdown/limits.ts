// Bounds that keep rendering linear in the input and its recursion shallow. Past them a message is refused the
// way the real server refuses a message its renderer fails on (too deep, too slow or any other exception):
// a 400 "Unable to render message".
import { ApiError } from '../domain/errors.js';
import type { MdNode } from './tree.js';

export class MarkdownRenderingError extends ApiError {
  constructor(cause?: unknown) {
    super('BAD_REQUEST', 400, 'Unable to render message');
    if (cause !== undefined) this.cause = cause;
  }
}

/** Block containers (quotes, list items) one line may sit in; micromark's cost per line grows with it. */
export const MAX_CONTAINER_DEPTH = 48;
/** Depth of the whole tree, inline nesting included: the later stages (mdast→hast→HTML) recurse per level. */
export const MAX_TREE_DEPTH = 160;
/** ```quote / ```spoiler fences inside each other; each level parses its content again. */
export const MAX_FENCE_DEPTH = 10;
/** Characters parsed in all, nested fence contents included, per character of the message. */
export const PARSE_BUDGET_FACTOR = 3;
export const PARSE_BUDGET_MINIMUM = 2_000;
/** The real server's rendering timeout, checked between stages; the bounds above keep real inputs far below it. */
export const RENDER_TIME_BUDGET_MS = 5_000;

const isIndent = (c: number) => c === 0x20 || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * An upper bound on the block containers open at once, in one pass. Containers open only on lines with a marker
 * (`>` or a list marker); there every container the line continues or opens shows as a marker or as at least two
 * columns of indentation (a list item's content offset). Lines without a marker open nothing, so they are skipped.
 */
export function containerDepthBound(source: string): number {
  let worst = 0;
  let i = 0;
  const n = source.length;
  while (i < n) {
    let markers = 0;
    let columns = 0;
    for (;;) {
      const c = source.charCodeAt(i);
      if (isIndent(c)) {
        columns += c === 0x09 ? 4 : 1;
        i++;
      } else if (c === 0x3e /* > */) {
        markers++;
        i++;
      } else if ((c === 0x2d || c === 0x2a || c === 0x2b) && (i + 1 >= n || isIndent(source.charCodeAt(i + 1)) || source.charCodeAt(i + 1) === 0x0a)) {
        markers++;
        i++;
      } else if (isDigit(c)) {
        let j = i;
        while (j < n && j - i < 9 && isDigit(source.charCodeAt(j))) j++;
        const d = source.charCodeAt(j);
        const after = source.charCodeAt(j + 1);
        if ((d !== 0x2e && d !== 0x29) || !(j + 1 >= n || isIndent(after) || after === 0x0a)) break;
        markers++;
        i = j + 1;
      } else {
        break;
      }
    }
    if (markers > 0) worst = Math.max(worst, markers + Math.floor(columns / 2));
    const end = source.indexOf('\n', i);
    i = end === -1 ? n : end + 1;
  }
  return worst;
}

/** The depth of a tree, measured without recursion. */
export function treeDepth(root: MdNode): number {
  let worst = 0;
  const pending: [MdNode, number][] = [[root, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > worst) worst = depth;
    for (const child of node.children ?? []) pending.push([child, depth + 1]);
  }
  return worst;
}

/** What one render may still spend: parsed characters and wall-clock time. */
export interface RenderBudget {
  charactersLeft: number;
  deadline: number;
}

export function newRenderBudget(source: string): RenderBudget {
  return {
    charactersLeft: Math.max(PARSE_BUDGET_MINIMUM, source.length * PARSE_BUDGET_FACTOR),
    deadline: performance.now() + RENDER_TIME_BUDGET_MS,
  };
}

export function spend(budget: RenderBudget, characters: number): void {
  budget.charactersLeft -= characters;
  if (budget.charactersLeft < 0 || performance.now() > budget.deadline) throw new MarkdownRenderingError();
}
