// remark-rehype handler for inline code that keeps its line breaks: remark-rehype's own turns them into spaces
// (CommonMark), while the real server's backtick pattern keeps a code span's text exactly as typed.
import type { Element } from 'hast';
import type { InlineCode } from 'mdast';
import type { State } from 'mdast-util-to-hast';

export function inlineCodeToHast(state: State, node: InlineCode): Element {
  const result: Element = { type: 'element', tagName: 'code', properties: {}, children: [{ type: 'text', value: node.value }] };
  state.patch(node, result);
  return state.applyData(node, result);
}
