// Small helpers over loosely typed mdast trees: Zulip's transforms add node kinds that mdast's types do not know.
import type { ElementContent, Properties } from 'hast';

export interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
  url?: string;
  title?: string | null;
  alt?: string | null;
  lang?: string | null;
  meta?: string | null;
  ordered?: boolean | null;
  start?: number | null;
  spread?: boolean | null;
  data?: { hName?: string; hProperties?: Properties; hChildren?: ElementContent[] };
  position?: { start: Point; end: Point };
}

/** A place in the source; micromark gives all three (column 1-based, in UTF-16 code units like offset). */
export interface Point {
  line?: number;
  column?: number;
  offset?: number;
}

export const text = (value: string): MdNode => ({ type: 'text', value });

/** An mdast node that becomes `<tag …>` with the given mdast children. */
export function element(tagName: string, properties: Properties, children: MdNode[] = []): MdNode {
  return { type: 'zulipElement', data: { hName: tagName, hProperties: properties }, children };
}

/** Like element(), for block wrappers whose mdast children get the inline transforms like any other text. */
export function container(tagName: string, properties: Properties, children: MdNode[]): MdNode {
  return { type: 'zulipContainer', data: { hName: tagName, hProperties: properties }, children };
}

/** An mdast node that becomes `<tag …>` with ready-made hast children. */
export function hastElement(tagName: string, properties: Properties, hChildren: ElementContent[]): MdNode {
  return { type: 'zulipElement', data: { hName: tagName, hProperties: properties, hChildren }, children: [] };
}

export const hText = (value: string): ElementContent => ({ type: 'text', value });
export const h = (tagName: string, properties: Properties, children: ElementContent[] = []): ElementContent => ({
  type: 'element',
  tagName,
  properties,
  children,
});

/**
 * Depth-first walk; `visit` may return a replacement list for the node (not walked again). Recursive: callers
 * walk only trees whose depth parseMarkdown has bounded.
 */
export function rewrite(node: MdNode, visit: (node: MdNode) => MdNode[] | undefined): void {
  const children = node.children;
  if (!children) return;
  // A new list only once something is replaced: most walks replace nothing in most nodes.
  let next: MdNode[] | undefined;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const replacement = visit(child);
    if (replacement) {
      next ??= children.slice(0, i);
      for (const replaced of replacement) next.push(replaced);
    } else {
      rewrite(child, visit);
      next?.push(child);
    }
  }
  if (next) node.children = next;
}

/** A match found in a text node: the source range it covers and the nodes that replace it. */
export interface TextMatch {
  start: number;
  end: number;
  nodes: MdNode[];
}

/** Where a text node sits among its siblings: whether an element (not text) stands right before or after it. */
export interface TextEdges {
  elementBefore: boolean;
  elementAfter: boolean;
}

/**
 * Splits text nodes around the matches `find` reports; nodes inside `skip` types are left alone.
 * Replacement nodes are not searched again.
 */
export function replaceInText(
  root: MdNode,
  skip: ReadonlySet<string>,
  find: (value: string, edges: TextEdges) => TextMatch[],
): void {
  const walk = (parent: MdNode): void => {
    const children = parent.children;
    if (!children) return;
    let next: MdNode[] | undefined;
    for (let i = 0; i < children.length; i++) {
      const node = children[i]!;
      if (skip.has(node.type)) {
        next?.push(node);
        continue;
      }
      const matches =
        node.type === 'text' && node.value
          ? find(node.value, {
              elementBefore: i > 0 && children[i - 1]!.type !== 'text',
              elementAfter: i + 1 < children.length && children[i + 1]!.type !== 'text',
            })
          : [];
      if (matches.length === 0) {
        walk(node);
        next?.push(node);
        continue;
      }
      next ??= children.slice(0, i);
      const value = node.value!;
      let at = 0;
      for (const match of matches) {
        if (match.start > at) next.push(text(value.slice(at, match.start)));
        for (const replaced of match.nodes) next.push(replaced);
        at = match.end;
      }
      if (at < value.length) next.push(text(value.slice(at)));
    }
    if (next) parent.children = next;
  };
  walk(root);
}

/** All regex matches, mapped to replacements; `build` may decline a match by returning undefined. */
export function regexMatches(value: string, pattern: RegExp, build: (match: RegExpExecArray) => TextMatch | undefined): TextMatch[] {
  const found: TextMatch[] = [];
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g');
  let match: RegExpExecArray | null;
  while ((match = re.exec(value)) !== null) {
    const result = build(match);
    if (result) {
      found.push(result);
      re.lastIndex = result.end;
    } else {
      re.lastIndex = match.index + 1;
    }
  }
  return found;
}

export function toPlainText(node: MdNode): string {
  if (typeof node.value === 'string') return node.value;
  return (node.children ?? []).map(toPlainText).join('');
}
