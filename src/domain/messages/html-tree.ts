// A small element tree for the edit-history HTML diff (html-diff.ts), read and written the way the
// real server's libxml2 (through lxml) reads and writes HTML, so that the diff comes out with the
// same bytes: the rendered versions are parsed with parse5, the diff's own markup is built into a
// tree with libxml2's recovery rules (it has no HTML5 table foster-parenting, which would tear a
// changed table cell out of its table), and the result is serialized as libxml2's HTML output is.
import { parseFragment, type DefaultTreeAdapterTypes } from 'parse5';

/** An element; text is a plain string among the children. */
export interface HtmlElement {
  tag: string;
  attrs: Array<[string, string]>;
  children: HtmlNode[];
}
export type HtmlNode = string | HtmlElement;

export const isElement = (node: HtmlNode): node is HtmlElement => typeof node !== 'string';
export const element = (tag: string, children: HtmlNode[] = [], attrs: Array<[string, string]> = []): HtmlElement => ({ tag, attrs, children });

/** The elements libxml2 writes without an end tag and whose end tags it ignores. */
const VOID_ELEMENTS = new Set(['area', 'base', 'basefont', 'br', 'col', 'frame', 'hr', 'img', 'input', 'isindex', 'link', 'meta', 'param']);
/** Attributes libxml2 writes as a bare name. */
const BOOLEAN_ATTRIBUTES = new Set(['checked', 'compact', 'declare', 'defer', 'disabled', 'ismap', 'multiple', 'nohref', 'noresize', 'noshade', 'nowrap', 'readonly', 'selected']);

/** Parses an HTML fragment (a rendered message) into children of an implicit container. */
export function parseHtmlFragment(html: string): HtmlNode[] {
  return convertChildren(parseFragment(html).childNodes);
}

function convertChildren(nodes: DefaultTreeAdapterTypes.ChildNode[]): HtmlNode[] {
  const out: HtmlNode[] = [];
  for (const node of nodes) {
    if (node.nodeName === '#text') out.push((node as DefaultTreeAdapterTypes.TextNode).value);
    else if ('tagName' in node) {
      // libxml2's HTML parser folds every name to lower case (SVG's viewBox too).
      const attrs = node.attrs.map((a): [string, string] => [(a.prefix ? `${a.prefix}:${a.name}` : a.name).toLowerCase(), a.value]);
      const content = node.nodeName === 'template' ? (node as DefaultTreeAdapterTypes.Template).content.childNodes : node.childNodes;
      out.push(element(node.tagName.toLowerCase(), convertChildren(content), attrs));
    }
    // Comments and doctypes carry no words; the sanitized messages have none.
  }
  return out;
}

// ---- Building a tree from the diff's own markup, with libxml2's recovery rules --------------------

// For a start tag, the current elements it closes first (libxml2's htmlStartClose table; it
// checks the current element again after each close). A block start closes a paragraph.
const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
const FONT_STYLES = ['tt', 'i', 'b', 'u', 's', 'strike', 'big', 'small'];
const START_CLOSES = new Map<string, Set<string>>(Object.entries({
  form: ['form', 'p', 'hr', ...HEADINGS, 'dl', 'ul', 'ol', 'menu', 'dir', 'address', 'pre', 'listing', 'xmp'],
  li: ['p', ...HEADINGS, 'dl', 'address', 'pre', 'listing', 'xmp', 'li'],
  hr: ['p'],
  ...Object.fromEntries(HEADINGS.map((h) => [h, ['p', ...HEADINGS.filter((other) => other !== h)]])),
  dir: ['p'],
  address: ['p', 'ul'],
  pre: ['p', 'ul'],
  listing: ['p'],
  xmp: ['p'],
  blockquote: ['p'],
  dl: ['p', 'dt', 'menu', 'dir', 'address', 'pre', 'listing', 'xmp'],
  dt: ['p', 'menu', 'dir', 'address', 'pre', 'listing', 'xmp', 'dd'],
  dd: ['p', 'menu', 'dir', 'address', 'pre', 'listing', 'xmp', 'dt'],
  ul: ['p', 'ol', 'menu', 'dir', 'address', 'pre', 'listing', 'xmp'],
  ol: ['p', 'ul'],
  menu: ['p', 'ul'],
  p: ['p', ...HEADINGS, ...FONT_STYLES],
  div: ['p'],
  center: ['font', 'b', 'i', 'p'],
  a: ['a'],
  caption: ['p'],
  colgroup: ['caption', 'colgroup', 'col', 'p'],
  col: ['caption', 'col', 'p'],
  table: ['p', ...HEADINGS, 'pre', 'listing', 'xmp', 'a'],
  th: ['th', 'td', 'p', 'span', 'font', 'a', 'b', 'i', 'u'],
  td: ['th', 'td', 'p', 'span', 'font', 'a', 'b', 'i', 'u'],
  tr: ['th', 'td', 'tr', 'caption', 'col', 'colgroup', 'p'],
  thead: ['caption', 'col', 'colgroup'],
  tfoot: ['th', 'td', 'tr', 'caption', 'col', 'colgroup', 'thead', 'tbody', 'p'],
  tbody: ['th', 'td', 'tr', 'caption', 'col', 'colgroup', 'thead', 'tfoot', 'tbody', 'p'],
  optgroup: ['option'],
  option: ['option'],
  fieldset: ['legend', 'p', ...HEADINGS, 'pre', 'listing', 'xmp', 'a'],
}).map(([tag, closed]) => [tag, new Set(closed)]));
/** An end tag closes the elements open inside its own, but none of higher priority than its own. */
const END_PRIORITY: Record<string, number> = { div: 150, td: 160, th: 160, tr: 170, thead: 180, tbody: 180, tfoot: 180, table: 190 };
const endPriority = (tag: string) => END_PRIORITY[tag] ?? 100;

// Markup this code wrote itself (the diff's chunks, or serializeHtml's output): tags with
// attributes quoted with " or ' (or bare), and text escaped with the five references below.
const markupToken = /<(\/?)([a-z][^\s>/]*)((?:\s+[^\s=>]+(?:="[^"]*"|='[^']*')?)*)\s*>|[^<]+/y;
const attributeToken = /\s+([^\s=>]+)(?:="([^"]*)"|='([^']*)')?/g;
const REFERENCES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'" };
const unescape = (text: string) => text.replace(/&(?:amp|lt|gt|quot|#x27);/g, (ref) => REFERENCES[ref]!);

/**
 * The tree of markup this code wrote (see markupToken), as libxml2 builds it: a start tag first closes the current
 * elements it implies the end of (a block closes a paragraph), an end tag closes what is open inside
 * its element unless that holds something of a higher rank (a table cell), and end tags of nothing
 * open (or of void elements) are dropped.
 */
export function parseOwnMarkup(markup: string): HtmlNode[] {
  const root = element('#root');
  const stack: HtmlElement[] = [root];
  const current = () => stack[stack.length - 1]!;
  const addText = (text: string) => current().children.push(unescape(text));
  let at = 0;
  while (at < markup.length) {
    markupToken.lastIndex = at;
    const match = markupToken.exec(markup);
    if (!match) {
      // Not markup this code writes; kept as text rather than lost.
      addText('<');
      at += 1;
      continue;
    }
    at = markupToken.lastIndex;
    const [token, slash, rawName, rawAttrs] = match;
    if (rawName === undefined) {
      addText(token);
      continue;
    }
    const tag = rawName.toLowerCase();
    if (slash) {
      if (!VOID_ELEMENTS.has(tag)) closeElement(stack, tag);
      continue;
    }
    const closes = START_CLOSES.get(tag);
    while (closes && stack.length > 1 && closes.has(current().tag)) stack.pop();
    const attrs = [...(rawAttrs ?? '').matchAll(attributeToken)].map((a): [string, string] => [a[1]!, unescape(a[2] ?? a[3] ?? '')]);
    const el = element(tag, [], attrs);
    current().children.push(el);
    if (!VOID_ELEMENTS.has(tag)) stack.push(el);
  }
  return root.children;
}

/** Closes the open `tag` and what is open inside it, unless something of a higher rank is in between. */
function closeElement(stack: HtmlElement[], tag: string): void {
  for (let i = stack.length - 1; i > 0; i--) {
    if (stack[i]!.tag === tag) {
      stack.length = i;
      return;
    }
    if (endPriority(stack[i]!.tag) > endPriority(tag)) return;
  }
}

// ---- Writing, as libxml2's HTML serializer does ------------------------------------------------

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** libxml2 writes a link-like attribute URI-escaped: every byte outside its allowed set as %XX. */
const URI_ALLOWED = /[A-Za-z0-9\-_.!~*'()@/:=?;#%&,+]/;
function uriEscape(value: string): string {
  let out = '';
  for (const ch of value.replace(/^[ \t\n\r]+/, '')) {
    if (URI_ALLOWED.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A name that cannot break out of its tag (parse5 accepts quotes and "<" in names; messages never have them). */
export const isAttributeName = (name: string) => /^[^\s"'<>/=]+$/.test(name);

function attribute(el: HtmlElement, name: string, raw: string): string {
  if (BOOLEAN_ATTRIBUTES.has(name)) return ` ${name}`;
  let value = escapeText(raw);
  if (name === 'href' || name === 'src' || name === 'action' || (name === 'name' && el.tag === 'a')) value = uriEscape(value);
  // A value holding `"` is quoted with `'`, unless it holds both quotes.
  if (!value.includes('"')) return ` ${name}="${value}"`;
  if (!value.includes("'")) return ` ${name}='${value}'`;
  return ` ${name}="${value.replace(/"/g, '&quot;')}"`;
}

/** The HTML of nodes, written as libxml2 writes them (lxml's tostring(method="html")). */
export function serializeHtml(nodes: readonly HtmlNode[]): string {
  let out = '';
  for (const node of nodes) {
    if (!isElement(node)) {
      // Text is escaped everywhere, <script> and <style> included (libxml2 writes theirs raw; the
      // sanitized messages have neither, and the diff must never turn text into markup).
      out += escapeText(node);
      continue;
    }
    out += `<${node.tag}${node.attrs.filter(([name]) => isAttributeName(name)).map(([name, value]) => attribute(node, name, value)).join('')}>`;
    // libxml2 leaves out the end tag of an empty list item too.
    if (VOID_ELEMENTS.has(node.tag) || (node.tag === 'li' && node.children.length === 0)) continue;
    out += `${serializeHtml(node.children)}</${node.tag}>`;
  }
  return out;
}
