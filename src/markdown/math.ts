// TeX via KaTeX (pinned to the version whose output Zulip's fixtures show): `$$…$$` inline and ```math blocks.
import { fromHtml } from 'hast-util-from-html';
import type { ElementContent } from 'hast';
import katex from 'katex';
import { QUOTE_ESCAPED_CLASS } from './serialize.js';
import { element, hastElement, text, type MdNode } from './tree.js';

function katexHast(tex: string, displayMode: boolean): ElementContent[] | undefined {
  let html: string;
  try {
    html = katex.renderToString(tex, { displayMode, throwOnError: true, output: 'htmlAndMathml', trust: false });
  } catch {
    return undefined;
  }
  return fromHtml(html, { fragment: true }).children as ElementContent[];
}

/** An inline `$$…$$` atom. */
export function renderInlineMath(atom: string): MdNode[] {
  const rendered = katexHast(atom.slice(2, -2), false);
  if (!rendered) return [element('span', { className: ['tex-error'] }, [text(atom)])];
  return rendered.map((node) => (node.type === 'element' ? hastElement(node.tagName, node.properties, node.children) : text('')));
}

/** A ```math block: one paragraph holding the display equation (or the source, marked as an error). */
export function renderDisplayMath(tex: string): MdNode {
  const rendered = katexHast(tex, true);
  if (!rendered) return element('p', {}, [element('span', { className: ['tex-error', QUOTE_ESCAPED_CLASS] }, [text(tex)])]);
  return hastElement('p', {}, rendered);
}
