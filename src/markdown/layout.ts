// Line breaks between blocks, placed the way Zulip's server output has them: a newline after every block
// element, and one after a container's opening tag when it starts with a block. Code, math and previews are
// left as they are; the spoiler wrapper and image previews carry no newlines of their own.
import type { Element, ElementContent, Root, RootContent } from 'hast';

// Python-Markdown's block-level element names, which its serializer separates with newlines.
const blockTags = new Set([
  'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'dd', 'dt', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol',
  'p', 'pre', 'section', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'video',
]);

const classes = (node: Element): string[] => {
  const value = node.properties?.className;
  return Array.isArray(value) ? value.map(String) : [];
};
const hasClass = (node: Element, name: string): boolean => classes(node).includes(name);

const isBlock = (node: RootContent | ElementContent | undefined): node is Element =>
  node !== undefined && node.type === 'element' && blockTags.has(node.tagName);
const isOpaque = (node: Element): boolean =>
  node.tagName === 'pre' || hasClass(node, 'codehilite') || hasClass(node, 'message_inline_image');
const hasNoTail = (node: Element): boolean =>
  hasClass(node, 'message_inline_image') || hasClass(node, 'spoiler-header') || hasClass(node, 'spoiler-content');
const isBlank = (node: RootContent | ElementContent | undefined): boolean =>
  node !== undefined && node.type === 'text' && node.value.trim() === '';

function layoutChildren(parent: Root | Element): void {
  const children = parent.children as (RootContent | ElementContent)[];
  // Drop the whitespace that earlier stages put between blocks.
  const kept = children.filter((child, i) => !(isBlank(child) && (isBlock(children[i - 1]) || isBlock(children[i + 1]))));
  const out: (RootContent | ElementContent)[] = [];
  const first = kept[0];
  if (parent.type === 'element' && isBlock(first) && !hasClass(parent, 'spoiler-block')) out.push({ type: 'text', value: '\n' });
  // An empty spoiler header still has its line break (the real server's header is an empty paragraph slot).
  if (parent.type === 'element' && kept.length === 0 && hasClass(parent, 'spoiler-header')) out.push({ type: 'text', value: '\n' });
  kept.forEach((child, i) => {
    out.push(child);
    if (!isBlock(child)) return;
    if (!isOpaque(child)) layoutChildren(child);
    const next = kept[i + 1];
    const nextStartsWithText = next?.type === 'text' && next.value.trim() !== '' && !/^\s/.test(next.value);
    if (!hasNoTail(child) && !nextStartsWithText) out.push({ type: 'text', value: '\n' });
  });
  parent.children = out as typeof parent.children;
}

/** rehype plugin */
export function rehypeZulipLayout() {
  return (tree: Root): void => {
    layoutChildren(tree);
    // The message ends at its last element: no trailing newline.
    const last = tree.children[tree.children.length - 1];
    if (last?.type === 'text' && last.value === '\n') tree.children.pop();
  };
}
