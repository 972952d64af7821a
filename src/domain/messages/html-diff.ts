// The `content_html_diff` of a message's edit history: the real server runs lxml's htmldiff over the
// previous and the new rendered HTML, turns each <del> into <span class="highlight_text_deleted"> and
// each <ins> into <span class="highlight_text_inserted">, and writes the result inside a <div>
// (zerver/lib/html_diff.py). This module follows htmldiff's rules (lxml/html/diff.py, as in lxml 4
// and 5): the HTML becomes a list of words, each carrying the tags around it; the words are diffed
// (here with jsdiff instead of Python's difflib, see matchingBlocks); inserted words are wrapped in
// <ins>, deleted ones (taken from the old HTML) in <del>, with the tags of either side kept as far as
// they stay balanced; and an <ins> or <del> holding a block (a paragraph, a list item) is moved into
// the blocks. Only the markup of the two versions and the two highlight spans ever reach the output.
import { diffArrays } from 'diff';
import { parseOwnMarkup, element, isAttributeName, isElement, parseHtmlFragment, serializeHtml, type HtmlElement, type HtmlNode } from './html-tree.js';

/** The highlighted differences between two rendered versions of a message, as the real server writes them. */
export function highlightHtmlDifferences(previous: string, current: string): string {
  const nodes = parseOwnMarkup(htmldiff(previous, current));
  for (const el of descendants(nodes)) {
    if (el.tag === 'ins' || el.tag === 'del') {
      el.attrs = [['class', el.tag === 'ins' ? 'highlight_text_inserted' : 'highlight_text_deleted']];
      el.tag = 'span';
    }
  }
  return serializeHtml([element('div', nodes)]);
}

/** lxml's htmldiff: the new HTML with <ins> and <del> around what changed. */
function htmldiff(previous: string, current: string): string {
  const chunks = diffTokens(tokenize(previous), tokenize(current));
  const nodes = parseOwnMarkup(joinChunks(chunks));
  moveInsDelIntoBlocks(nodes);
  return pyStrip(serializeHtml(nodes));
}

// ---- Whitespace as Python sees it (str.isspace, re's \s) -------------------------------------------

const WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const wordPattern = new RegExp(`[^${WS}]+(?:[${WS}]+|$)`, 'g');
const trailingWs = new RegExp(`[${WS}]+$`);
const edgeWs = new RegExp(`^[${WS}]+|[${WS}]+$`, 'g');
const pyStrip = (text: string) => text.replace(edgeWs, '');
const isBlank = (text: string) => pyStrip(text) === '';

// ---- Tokens: words with the tags around them -------------------------------------------------------

/** A word (or an image, or a link's target) with the tags before and after it. */
interface Token {
  /** What the diff compares: the escaped word, the image's source, the link's target. */
  key: string;
  /** What is written for it. */
  html: string;
  preTags: string[];
  postTags: string[];
  trailingWhitespace: string;
  /** A link target is shown only where it changed. */
  hideWhenEqual: boolean;
}

type Chunk = string | { img: string | null; html: string } | { href: string };

// lxml's empty_tags: a childless one with no text after it yields its start tag only.
const EMPTY_TAGS = new Set(['param', 'img', 'area', 'br', 'basefont', 'input', 'base', 'meta', 'link', 'col']);
const BLOCK_TAGS = new Set(['address', 'blockquote', 'center', 'dir', 'div', 'dl', 'fieldset', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'hr', 'isindex', 'menu', 'noframes', 'noscript', 'ol', 'p', 'pre', 'table', 'ul',
  'dd', 'dt', 'frameset', 'li', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr']);

const htmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

const startTag = (el: HtmlElement) =>
  `<${el.tag}${el.attrs.filter(([name]) => isAttributeName(name)).map(([name, value]) => ` ${name}="${htmlEscape(value)}"`).join('')}>`;
const endTag = (tag: string, tail: string) => `</${tag}>${/^[ \t\n\r]/.test(tail) ? ' ' : ''}`;
const attr = (el: HtmlElement, name: string) => el.attrs.find(([n]) => n === name)?.[1] ?? null;
const splitWords = (text: string) => (isBlank(text) ? [] : text.match(wordPattern) ?? []);

// lxml strips <ins>, <del> and any page structure from both versions before reading them (so a
// struck-through ~~word~~, rendered as <del>, loses its <del>).
const cleanup = (html: string) => {
  const body = /<body.*?>/is.exec(html);
  if (body) html = html.slice(body.index + body[0].length);
  const bodyEnd = /<\/body.*?>/is.exec(html);
  if (bodyEnd) html = html.slice(0, bodyEnd.index);
  return html.replace(/<\/?(ins|del).*?>/gis, '');
};

function tokenize(html: string): Token[] {
  const chunks: Chunk[] = [];
  const root = element('div', parseHtmlFragment(cleanup(html)));
  flatten(root, '', true, chunks);
  return tokensOf(chunks);
}

/** The text before an element's first child element, and each child element with the text after it. */
function textAndTails(children: HtmlNode[]): { text: string; items: Array<[HtmlElement, string]> } {
  let text = '';
  const items: Array<[HtmlElement, string]> = [];
  for (const child of children) {
    if (isElement(child)) items.push([child, '']);
    else if (items.length === 0) text += child;
    else items[items.length - 1]![1] += child;
  }
  return { text, items };
}

/** Each start tag, word and end tag of `el` in order (lxml's flatten_el); `tail` is the text after it. */
function flatten(el: HtmlElement, tail: string, skipTag: boolean, out: Chunk[]): void {
  if (!skipTag) out.push(el.tag === 'img' ? { img: attr(el, 'src'), html: startTag(el) } : startTag(el));
  const { text, items } = textAndTails(el.children);
  if (EMPTY_TAGS.has(el.tag) && !text && items.length === 0 && !tail) return;
  for (const word of splitWords(text)) out.push(htmlEscape(word));
  for (const [child, childTail] of items) flatten(child, childTail, false, out);
  const href = attr(el, 'href');
  if (el.tag === 'a' && href) out.push({ href });
  if (skipTag) return;
  out.push(endTag(el.tag, tail));
  for (const word of splitWords(tail)) out.push(htmlEscape(word));
}

function splitTrailingWhitespace(word: string): [string, string] {
  const ws = trailingWs.exec(word)?.[0] ?? '';
  return [word.slice(0, word.length - ws.length), ws];
}

/** Joins start tags to the word after them and end tags to the word before (lxml's fixup_chunks). */
function tokensOf(chunks: Chunk[]): Token[] {
  const result: Token[] = [];
  let tagAccum: string[] = [];
  const push = (token: Omit<Token, 'preTags' | 'postTags'>) => {
    result.push({ ...token, preTags: tagAccum, postTags: [] });
    tagAccum = [];
  };
  for (const chunk of chunks) {
    if (typeof chunk !== 'string') {
      if ('img' in chunk) {
        const [html, trailingWhitespace] = splitTrailingWhitespace(chunk.html);
        // lxml's key for an image token, whatever it spells, equals only another image's of the same source.
        push({ key: `<class 'type'>: ${chunk.img ?? 'None'}`, html, trailingWhitespace, hideWhenEqual: false });
      } else {
        // lxml writes the target as it is; escaped here, so that a target can never be read as markup.
        push({ key: chunk.href, html: ` Link: ${htmlEscape(chunk.href)}`, trailingWhitespace: ' ', hideWhenEqual: true });
      }
    } else if (!chunk.startsWith('<')) {
      const [word, trailingWhitespace] = splitTrailingWhitespace(chunk);
      push({ key: word, html: word, trailingWhitespace, hideWhenEqual: false });
    } else if (!chunk.startsWith('</') || tagAccum.length > 0) {
      tagAccum.push(chunk);
    } else {
      // An end tag right after a word; html is never empty of words here (the first chunk of a
      // fragment's content is a start tag or a word).
      result[result.length - 1]?.postTags.push(chunk);
    }
  }
  if (result.length === 0) return [{ key: '', html: '', preTags: tagAccum, postTags: [], trailingWhitespace: '', hideWhenEqual: false }];
  result[result.length - 1]!.postTags.push(...tagAccum);
  return result;
}

// ---- The diff of the tokens ------------------------------------------------------------------------

type Opcode = ['equal' | 'insert' | 'delete' | 'replace', number, number, number, number];

/**
 * Beyond this many inserted and deleted words the changed middle is shown as replaced as a whole:
 * jsdiff's cost grows with the square of the edit length, and the diff runs on the event loop.
 */
const MAX_EDIT_LENGTH = 250;

/**
 * The runs of equal tokens, as difflib's get_matching_blocks gives them (index in a, index in b,
 * length; the last is the end, of length 0). jsdiff's Myers diff finds a shortest edit script where
 * difflib grows the longest common run first; they agree on ordinary edits and may align repeated
 * words differently in ambiguous ones.
 */
function matchingBlocks(a: string[], b: string[]): Array<[number, number, number]> {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const blocks: Array<[number, number, number]> = prefix > 0 ? [[0, 0, prefix]] : [];
  const changes = diffArrays(a.slice(prefix, a.length - suffix), b.slice(prefix, b.length - suffix), { maxEditLength: MAX_EDIT_LENGTH });
  let i = prefix;
  let j = prefix;
  for (const change of changes ?? []) {
    if (change.added) j += change.count;
    else if (change.removed) i += change.count;
    else {
      blocks.push([i, j, change.count]);
      i += change.count;
      j += change.count;
    }
  }
  if (suffix > 0) blocks.push([a.length - suffix, b.length - suffix, suffix]);
  // Adjacent runs are one (as difflib gives them).
  const merged: Array<[number, number, number]> = [];
  for (const block of blocks) {
    const last = merged[merged.length - 1];
    if (last && last[0] + last[2] === block[0] && last[1] + last[2] === block[1]) last[2] += block[2];
    else merged.push(block);
  }
  return [...merged, [a.length, b.length, 0]];
}

/**
 * The opcodes of lxml's InsensitiveSequenceMatcher: runs of equal words no longer than
 * min(2, len(new) / 4) are dropped, so that a long change is not shredded by a stray common word.
 */
function opcodes(a: string[], b: string[]): Opcode[] {
  const threshold = Math.min(2, b.length / 4);
  const blocks = matchingBlocks(a, b).filter(([, , size]) => size > threshold || size === 0);
  const out: Opcode[] = [];
  let i = 0;
  let j = 0;
  for (const [ai, bj, size] of blocks) {
    if (i < ai && j < bj) out.push(['replace', i, ai, j, bj]);
    else if (i < ai) out.push(['delete', i, ai, j, bj]);
    else if (j < bj) out.push(['insert', i, ai, j, bj]);
    i = ai + size;
    j = bj + size;
    if (size > 0) out.push(['equal', ai, i, bj, j]);
  }
  return out;
}

// Markers of a deleted run until cleanupDelete places it.
const DEL_START = Symbol('DEL_START');
const DEL_END = Symbol('DEL_END');
type DocChunk = string | typeof DEL_START | typeof DEL_END;

function expandTokens(tokens: Token[], equal = false): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    out.push(...token.preTags);
    if (!equal || !token.hideWhenEqual) out.push(token.html + token.trailingWhitespace);
    out.push(...token.postTags);
  }
  return out;
}

function diffTokens(oldTokens: Token[], newTokens: Token[]): DocChunk[] {
  const doc: DocChunk[] = [];
  for (const [op, i1, i2, j1, j2] of opcodes(oldTokens.map((t) => t.key), newTokens.map((t) => t.key))) {
    if (op === 'equal') {
      doc.push(...expandTokens(newTokens.slice(j1, j2), true));
      continue;
    }
    if (op === 'insert' || op === 'replace') mergeInsert(expandTokens(newTokens.slice(j1, j2)), doc);
    if (op === 'delete' || op === 'replace') doc.push(DEL_START, ...expandTokens(oldTokens.slice(i1, i2)), DEL_END);
  }
  return cleanupDelete(doc);
}

const tagName = (chunk: string) => chunk.trim().split(/\s+/)[0]!.replace(/^[<>/]+|[<>/]+$/g, '');
const endsWithSpace = (chunk: DocChunk | undefined) => typeof chunk === 'string' && chunk.endsWith(' ');

/** Adds a space to the last chunk unless it ends with one (a start tag then takes a space of text). */
function spaceBefore(doc: DocChunk[]): void {
  const last = doc.length - 1;
  if (last >= 0 && typeof doc[last] === 'string' && !endsWithSpace(doc[last])) doc[last] += ' ';
}

/** <ins> around the balanced part of an inserted run; its unbalanced tags go before and after it. */
function mergeInsert(chunks: string[], doc: DocChunk[]): void {
  const { start, balanced, end } = splitUnbalanced(chunks);
  doc.push(...start);
  spaceBefore(doc);
  if (endsWithSpace(balanced[balanced.length - 1])) balanced[balanced.length - 1] = balanced[balanced.length - 1]!.slice(0, -1);
  doc.push('<ins>', ...balanced, '</ins> ', ...end);
}

/**
 * The tags opened and not closed in `chunks` (start), those closed and not opened (end), and the
 * rest in order (lxml's split_unbalanced). Void elements' tags count as balanced.
 */
function splitUnbalanced(chunks: string[]): { start: string[]; balanced: string[]; end: string[] } {
  const start: string[] = [];
  const end: string[] = [];
  let stack: Array<{ name: string; pos: number; chunk: string }> = [];
  const balanced: Array<string | null> = [];
  for (const chunk of chunks) {
    if (!chunk.startsWith('<')) {
      balanced.push(chunk);
      continue;
    }
    const name = tagName(chunk);
    if (EMPTY_TAGS.has(name)) {
      balanced.push(chunk);
      continue;
    }
    if (chunk[1] !== '/') {
      stack.push({ name, pos: balanced.length, chunk });
      balanced.push(null);
    } else if (stack.length > 0 && stack[stack.length - 1]!.name === name) {
      balanced.push(chunk);
      const open = stack.pop()!;
      balanced[open.pos] = open.chunk;
    } else {
      if (stack.length > 0) start.push(...stack.map((s) => s.chunk));
      stack = [];
      end.push(chunk);
    }
  }
  start.push(...stack.map((s) => s.chunk));
  return { start, balanced: balanced.filter((c): c is string => c !== null), end };
}

/**
 * Turns each DEL_START…DEL_END run into <del> around its balanced part (lxml's cleanup_delete): the
 * run's unbalanced tags come from the old HTML and are dropped, after moving the run past the
 * new HTML's tags that take their place (into the next paragraph, out of the previous one).
 */
function cleanupDelete(chunks: DocChunk[]): DocChunk[] {
  for (;;) {
    const startAt = chunks.indexOf(DEL_START);
    if (startAt === -1) return chunks;
    const endAt = chunks.indexOf(DEL_END);
    const pre = chunks.slice(0, startAt);
    const post = chunks.slice(endAt + 1);
    const { start, balanced, end } = splitUnbalanced(chunks.slice(startAt + 1, endAt) as string[]);
    locateUnbalancedStart(start, pre, post);
    locateUnbalancedEnd(end, pre, post);
    spaceBefore(pre);
    if (endsWithSpace(balanced[balanced.length - 1])) balanced[balanced.length - 1] = balanced[balanced.length - 1]!.slice(0, -1);
    chunks = [...pre, '<del>', ...balanced, '</del> ', ...post];
  }
}

/** Moves the deletion forward past start tags of the new HTML that match its unclosed ones. */
function locateUnbalancedStart(unbalanced: string[], pre: DocChunk[], post: DocChunk[]): void {
  while (unbalanced.length > 0 && post.length > 0) {
    const next = post[0]!;
    if (typeof next !== 'string' || !next.startsWith('<') || next[1] === '/') return;
    const name = tagName(next);
    if (name === 'ins' || name !== tagName(unbalanced[0]!)) return;
    unbalanced.shift();
    pre.push(post.shift()!);
  }
}

/** Moves the deletion back before end tags of the new HTML that match its unopened ones. */
function locateUnbalancedEnd(unbalanced: string[], pre: DocChunk[], post: DocChunk[]): void {
  while (unbalanced.length > 0 && pre.length > 0) {
    const next = pre[pre.length - 1]!;
    if (typeof next !== 'string' || !next.startsWith('</')) return;
    const name = tagName(next);
    if (name === 'ins' || name === 'del' || name !== tagName(unbalanced[unbalanced.length - 1]!)) return;
    unbalanced.pop();
    post.unshift(pre.pop()!);
  }
}

function joinChunks(chunks: DocChunk[]): string {
  return pyStrip(chunks.filter((c): c is string => typeof c === 'string').join(''));
}

// ---- <ins> and <del> go inside the blocks they hold -----------------------------------------------

const containsBlock = (el: HtmlElement): boolean => BLOCK_TAGS.has(el.tag) || el.children.some((c) => isElement(c) && containsBlock(c));

function* descendants(nodes: HtmlNode[]): Generator<HtmlElement> {
  for (const node of nodes) {
    if (!isElement(node)) continue;
    yield node;
    yield* descendants(node.children);
  }
}

/** The children list holding `target`. */
function parentList(nodes: HtmlNode[], target: HtmlElement): HtmlNode[] | undefined {
  if (nodes.includes(target)) return nodes;
  for (const node of nodes) {
    const found = isElement(node) ? parentList(node.children, target) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** lxml's fixup_ins_del_tags: <ins><p>word</p></ins> becomes <p><ins>word</ins></p>. */
function moveInsDelIntoBlocks(nodes: HtmlNode[]): void {
  for (const tag of ['ins', 'del']) {
    for (const el of [...descendants(nodes)].filter((e) => e.tag === tag)) {
      if (!containsBlock(el)) continue;
      moveInsideBlock(el, tag);
      const siblings = parentList(nodes, el)!;
      siblings.splice(siblings.indexOf(el), 1, ...el.children);
    }
  }
}

function moveInsideBlock(el: HtmlElement, tag: string): void {
  const { text, items } = textAndTails(el.children);
  if (!items.some(([child]) => containsBlock(child))) {
    el.children = [element(tag, el.children)];
    return;
  }
  const children: HtmlNode[] = [];
  for (const [child, tail] of items) {
    if (containsBlock(child)) {
      moveInsideBlock(child, tag);
      children.push(child);
      if (tail) children.push(element(tag, [tail]));
    } else {
      // The element moves with the text after it.
      children.push(element(tag, tail ? [child, tail] : [child]));
    }
  }
  if (text) children.unshift(element(tag, [text]));
  el.children = children;
}

