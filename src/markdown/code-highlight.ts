// Pygments highlighting of code blocks, as a step after rendering. Rendering is synchronous (inline or in a
// worker thread) and the highlighter is another process, so a code block Pygments can highlight is rendered
// with a marker for its text; at the end of the render the markers become the plain escaped code and their
// places in the HTML are kept (CodeBlockSite). The async caller then asks the helper for each block and puts
// the sanitized token spans in those places; a block the helper does not answer stays plain.
import { randomUUID } from 'node:crypto';
import type { Element, ElementContent, Root } from 'hast';
import { fromHtml } from 'hast-util-from-html';
import { sanitize } from 'hast-util-sanitize';
import { toHtml } from 'hast-util-to-html';
import type { HighlightRequest, PygmentsClient } from './pygments-client.js';
import { pygmentsCodeSchema } from './sanitize-schema.js';
import { escapeTextLikeZulip } from './serialize.js';
import { zulipHtmlOptions } from './trusted-html.js';

/** A code block awaiting highlighting: what to ask Pygments for. */
export type PendingCodeBlock = HighlightRequest;

/** Where a code block's text sits in the rendered HTML: html.slice(start, end) is its escaped plain code. */
export interface CodeBlockSite extends PendingCodeBlock {
  start: number;
  end: number;
}

// Random per process (and per worker thread), so that message text cannot spell a marker.
const markerPrefix = `zulip-code-${randomUUID()}-`;

/** The text standing for pending code block `index` until the render's end. */
export const codeMarker = (index: number): string => `${markerPrefix}${index}.`;

/** Code as the serializer writes text inside <pre>. */
export const escapeCode = (code: string): string =>
  escapeTextLikeZulip(toHtml({ type: 'element', tagName: 'pre', properties: {}, children: [{ type: 'text', value: code }] }, zulipHtmlOptions)).slice('<pre>'.length, -'</pre>'.length);

/** Replaces the markers in `html` by the plain code and says where each block's code went. */
export function placeCodeBlocks(html: string, pending: readonly PendingCodeBlock[]): { html: string; sites: CodeBlockSite[] } {
  if (pending.length === 0) return { html, sites: [] };
  const parts: string[] = [];
  const sites: CodeBlockSite[] = [];
  let length = 0;
  let from = 0;
  pending.forEach((block, index) => {
    const marker = codeMarker(index);
    const at = html.indexOf(marker, from);
    // A block that did not reach the output (the sanitizer dropped what held it) has nothing to highlight.
    if (at === -1) return;
    const before = html.slice(from, at);
    const code = escapeCode(`${block.code}\n`);
    parts.push(before, code);
    length += before.length;
    sites.push({ ...block, start: length, end: length + code.length });
    length += code.length;
    from = at + marker.length;
  });
  parts.push(html.slice(from));
  return { html: parts.join(''), sites };
}

const isElement = (node: ElementContent | undefined, tagName: string): node is Element =>
  node?.type === 'element' && node.tagName === tagName;

/**
 * The token spans inside HtmlFormatter's `<div class="codehilite"><pre><span></span><code>…</code></pre></div>`,
 * sanitized to spans with Pygments' token classes and text; undefined when the helper's HTML has another shape.
 */
export function pygmentsTokensHtml(formatterHtml: string): string | undefined {
  const root: Root = fromHtml(formatterHtml.trimEnd(), { fragment: true });
  if (root.children.length !== 1) return undefined;
  const div = root.children[0] as ElementContent;
  if (!isElement(div, 'div') || div.children.length !== 1) return undefined;
  const pre = div.children[0];
  if (!isElement(pre, 'pre') || pre.children.length !== 2 || !isElement(pre.children[0], 'span')) return undefined;
  const code = pre.children[1];
  if (!isElement(code, 'code')) return undefined;
  const safe = sanitize({ type: 'root', children: code.children }, pygmentsCodeSchema) as Root;
  return escapeTextLikeZulip(toHtml({ type: 'element', tagName: 'pre', properties: {}, children: safe.children as ElementContent[] }, zulipHtmlOptions)).slice('<pre>'.length, -'</pre>'.length);
}

/** `html` with each site's code highlighted by the helper where it answers in time. */
export async function highlightCodeBlocks(html: string, sites: readonly CodeBlockSite[], client: PygmentsClient): Promise<string> {
  if (sites.length === 0 || !client.enabled) return html;
  const answers = await Promise.all(sites.map(({ lang, code, hlLines }) => client.highlight({ lang, code, hlLines })));
  const parts: string[] = [];
  let from = 0;
  sites.forEach((site, i) => {
    const answer = answers[i];
    const tokens = answer === undefined ? undefined : pygmentsTokensHtml(answer);
    if (tokens === undefined) return;
    parts.push(html.slice(from, site.start), tokens);
    from = site.end;
  });
  parts.push(html.slice(from));
  return parts.join('');
}
