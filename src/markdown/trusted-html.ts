// HTML fragments that were sanitized and serialized once, ahead of the message, and go into its output as they
// are. KaTeX turns `$$a$$` into some forty elements with styles; sanitizing and serializing those for every
// occurrence made a message of repeated math cost seconds. A fragment is sanitized with the same schema and
// serialized with the same options as the rest of the message, so the bytes are the ones the whole-tree pass
// would have produced; only nodes this module made pass the sanitizer unchanged, anything else that is raw HTML
// is still removed by it.
import { randomUUID } from 'node:crypto';
import type { ElementContent, Nodes, Parents, Root, Text } from 'hast';
import { sanitize } from 'hast-util-sanitize';
import { toHtml, type Options as ToHtmlOptions } from 'hast-util-to-html';
import type { Handlers, Raw } from 'mdast-util-to-hast';
import { zulipSanitizeSchema } from './sanitize-schema.js';
import type { MdNode } from './tree.js';

/** How messages are serialized (rehype-stringify in render.ts uses the same). */
export const zulipHtmlOptions: ToHtmlOptions = { characterReferences: { useNamedReferences: true } };

const trusted = new WeakSet<Raw>();

/** Sanitizes and serializes `nodes` now; the result is inserted as it is wherever the returned node goes. */
export function trustedFragment(nodes: ElementContent[]): Raw {
  const safe = sanitize({ type: 'root', children: nodes }, zulipSanitizeSchema);
  const node: Raw = { type: 'raw', value: toHtml(safe, zulipHtmlOptions) };
  trusted.add(node);
  return node;
}

/** An mdast node that becomes the trusted fragment (see trustedFragmentHandlers). */
export const trustedFragmentNode = (fragment: Raw): MdNode => ({ type: 'zulipTrustedHtml', data: { zulipTrustedHtml: fragment } as MdNode['data'] });

/** remark-rehype handlers: a trusted fragment's mdast node becomes the fragment itself. */
export const trustedFragmentHandlers = {
  zulipTrustedHtml: (_state: unknown, node: MdNode): Raw | undefined => (node.data as { zulipTrustedHtml?: Raw } | undefined)?.zulipTrustedHtml,
} as Handlers;

// Stands in for a fragment while the sanitizer runs; random per process, so message text cannot spell one.
const placeholderPrefix = `zulip-trusted-html-${randomUUID()}-`;

/** rehype plugin in place of rehype-sanitize: sanitizes the tree, keeping trusted fragments as they are. */
export function rehypeSanitizeKeepingTrusted() {
  return (tree: Root): Root => {
    const fragments: Raw[] = [];
    forEachChildList(tree, (children) => {
      for (let i = 0; i < children.length; i++) {
        const child = children[i]!;
        if (child.type === 'raw' && trusted.has(child)) {
          children[i] = { type: 'text', value: `${placeholderPrefix}${fragments.length}` };
          fragments.push(child);
        }
      }
    });
    const safe = sanitize(tree, zulipSanitizeSchema) as Root;
    if (fragments.length === 0) return safe;
    forEachChildList(safe, (children) => {
      for (let i = 0; i < children.length; i++) {
        const child = children[i]!;
        if (child.type !== 'text' || !child.value.startsWith(placeholderPrefix)) continue;
        const fragment = fragments[Number((child as Text).value.slice(placeholderPrefix.length))];
        if (fragment) children[i] = fragment;
      }
    });
    return safe;
  };
}

/** Calls `visit` with every children array in the tree, without recursion. */
function forEachChildList(root: Parents, visit: (children: Nodes[]) => void): void {
  const pending: Parents[] = [root];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    const children = parent.children as Nodes[];
    visit(children);
    for (const child of children) if ('children' in child) pending.push(child);
  }
}
