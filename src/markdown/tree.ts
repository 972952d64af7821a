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
  position?: { start: { offset?: number }; end: { offset?: number } };
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
  if (!node.children) return;
  const next: MdNode[] = [];
  for (const child of node.children) {
    const replacement = visit(child);
    if (replacement) {
      for (const replaced of replacement) next.push(replaced);
    } else {
      rewrite(child, visit);
      next.push(child);
    }
  }
  node.children = next;
}

/** A match found in a text node: the source range it covers and the nodes that replace it. */
export interface TextMatch {
  start: number;
  end: number;
  nodes: MdNode[];
}

/**
 * Splits text nodes around the matches `find` reports; nodes inside `skip` types are left alone.
 * Replacement nodes are not searched again.
 */
export function replaceInText(root: MdNode, skip: ReadonlySet<string>, find: (value: string) => TextMatch[]): void {
  rewrite(root, (node) => {
    if (skip.has(node.type)) return [node];
    if (node.type !== 'text' || !node.value) return undefined;
    const matches = find(node.value);
    if (matches.length === 0) return undefined;
    const out: MdNode[] = [];
    let at = 0;
    for (const match of matches) {
      if (match.start > at) out.push(text(node.value.slice(at, match.start)));
      out.push(...match.nodes);
      at = match.end;
    }
    if (at < node.value.length) out.push(text(node.value.slice(at)));
    return out;
  });
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
