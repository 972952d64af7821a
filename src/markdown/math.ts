// TeX via KaTeX (pinned to the version whose output Zulip's fixtures show): `$$…$$` inline and ```math blocks.
// Each distinct expression is rendered, sanitized and serialized once (and kept for later messages, up to a
// bound): a message repeating one expression costs one KaTeX run, not one per occurrence.
import { fromHtml } from 'hast-util-from-html';
import type { ElementContent } from 'hast';
import katex from 'katex';
import { QUOTE_ESCAPED_CLASS } from './serialize.js';
import type { Raw } from 'mdast-util-to-hast';
import { trustedFragment, trustedFragmentNode } from './trusted-html.js';
import { element, hastElement, text, type MdNode } from './tree.js';

/** Distinct expressions kept between messages (least recently used go first)... */
const CACHE_SIZE = 1_000;
/** ...and characters of rendered HTML kept in all (KaTeX's output is some hundred times its input). */
const CACHE_MAX_HTML = 4_000_000;
/** Expressions longer than this are rendered every time rather than kept. */
const CACHE_MAX_TEX_LENGTH = 2_000;
const cache = new Map<string, Raw | null>();
let cachedHtml = 0;

function katexHast(tex: string, displayMode: boolean): ElementContent[] | undefined {
  let html: string;
  try {
    html = katex.renderToString(tex, { displayMode, throwOnError: true, output: 'htmlAndMathml', trust: false });
  } catch {
    return undefined;
  }
  return fromHtml(html, { fragment: true }).children as ElementContent[];
}

/** The expression's elements as a trusted fragment, or null when KaTeX cannot render it. */
function renderedMath(tex: string, displayMode: boolean): Raw | null {
  const key = `${displayMode ? 'd' : 'i'}${tex}`;
  const cached = cache.get(key);
  if (cached !== undefined) {
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const rendered = katexHast(tex, displayMode);
  // Only elements are kept: the text between them (none, in KaTeX's output) rendered as nothing before too.
  const fragment = rendered ? trustedFragment(rendered.filter((node) => node.type === 'element')) : null;
  const size = fragment?.value.length ?? 0;
  if (tex.length <= CACHE_MAX_TEX_LENGTH && size <= CACHE_MAX_HTML / 4) {
    cache.set(key, fragment);
    cachedHtml += size;
    for (const [oldest, value] of cache) {
      if (cache.size <= CACHE_SIZE && cachedHtml <= CACHE_MAX_HTML) break;
      cache.delete(oldest);
      cachedHtml -= value?.value.length ?? 0;
    }
  }
  return fragment;
}

/** An inline `$$…$$` atom. */
export function renderInlineMath(atom: string): MdNode[] {
  const rendered = renderedMath(atom.slice(2, -2), false);
  if (!rendered) return [element('span', { className: ['tex-error'] }, [text(atom)])];
  return [trustedFragmentNode(rendered)];
}

/** A ```math block: one paragraph holding the display equation (or the source, marked as an error). */
export function renderDisplayMath(tex: string): MdNode {
  const rendered = renderedMath(tex, true);
  if (!rendered) return element('p', {}, [element('span', { className: ['tex-error', QUOTE_ESCAPED_CLASS] }, [text(tex)])]);
  return hastElement('p', {}, [rendered]);
}
