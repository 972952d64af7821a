// Zulip's inline transforms on the parsed tree, in order: atoms (mentions, channel links, math, times),
// bare URLs, realm linkifiers, `*` emphasis, emoji, then hard line breaks for every newline.
import { findUrls } from './autolink.js';
import { renderChannelLink } from './channel-links.js';
import { findEmoji } from './emoji-text.js';
import { applyEmphasis } from './emphasis.js';
import { findLinkifierMatches } from './linkifiers.js';
import { renderInlineMath } from './math.js';
import { renderMention } from './mentions.js';
import type { RenderState } from './state.js';
import { renderGlobalTime } from './time.js';
import { decodeCharacterReferences } from './urls.js';
import { element, replaceInText, rewrite, text, type MdNode, type TextMatch } from './tree.js';

const insideCode = new Set(['code', 'inlineCode', 'zulipElement']);
const insideLinks = new Set([...insideCode, 'link']);

function mergeAdjacentText(node: MdNode): void {
  const children = node.children;
  if (!children) return;
  // A new list only from the first merge on: most child lists have no adjacent text nodes.
  let merged: MdNode[] | undefined;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const last = merged ? merged[merged.length - 1] : children[i - 1];
    if (child.type === 'text' && last?.type === 'text') {
      merged ??= children.slice(0, i);
      last.value = (last.value ?? '') + (child.value ?? '');
    } else {
      merged?.push(child);
    }
    mergeAdjacentText(child);
  }
  if (merged) node.children = merged;
}

function renderAtom(atom: string, state: RenderState): MdNode[] {
  switch (atom[0]) {
    case '@':
      return renderMention(atom, state);
    case '#':
      return renderChannelLink(atom, state);
    case '$':
      return renderInlineMath(atom);
    case '<':
      return renderGlobalTime(atom, state.ctx.now);
    default:
      return [text(atom)];
  }
}

const linkNode = (url: string, label: string): MdNode => ({ type: 'link', url, title: null, children: [text(label)] });

export function applyInlineTransforms(tree: MdNode, state: RenderState): void {
  rewrite(tree, (node) => (node.type === 'zulipAtom' ? renderAtom(node.value ?? '', state) : undefined));
  mergeAdjacentText(tree);
  replaceInText(tree, insideLinks, (value) =>
    findUrls(value).map((url): TextMatch => ({ start: url.start, end: url.end, nodes: [linkNode(decodeCharacterReferences(url.href), url.text)] })),
  );
  if (state.ctx.linkifiers.length > 0) {
    replaceInText(tree, insideLinks, (value) =>
      findLinkifierMatches(value, state.ctx.linkifiers, state.ctx.realmUrl).map(
        (match): TextMatch => ({ start: match.start, end: match.end, nodes: [linkNode(match.url, match.text)] }),
      ),
    );
  }
  applyEmphasis(tree);
  replaceInText(tree, insideCode, (value, edges) => findEmoji(value, state, edges));
  replaceInText(tree, insideCode, (value) => {
    const breaks: TextMatch[] = [];
    if (!value.includes('\n')) return breaks;
    // A <br> element rather than an mdast break: remark-rehype strips the spaces after a break, Zulip keeps them.
    for (const match of value.matchAll(/\n/g)) breaks.push({ start: match.index, end: match.index + 1, nodes: [element('br', {}), text('\n')] });
    return breaks;
  });
}
