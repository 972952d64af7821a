// Emoji in message text, in the real server's order: `:name:` (the realm's custom emoji, then Zulip's own,
// then Unicode names), then emoticons when the sender translates them, then Unicode emoji characters.
import { ZULIP_EMOJI_IMAGE_PATH, ZULIP_EXTRA_EMOJI } from '../emoji/catalogue.js';
import { emojiByName, emojiNamePattern, emojiOfEmoticon, emojiOfSequence, emojiSequencePattern, emoticonPattern, type UnicodeEmoji } from './emoji.js';
import type { RenderState } from './state.js';
import { element, text, type MdNode, type TextEdges, type TextMatch } from './tree.js';

function unicodeEmojiNode(emoji: UnicodeEmoji): MdNode {
  const label = emoji.name.replace(/_/g, ' ');
  return element('span', { ariaLabel: label, className: ['emoji', `emoji-${emoji.code}`], role: 'img', title: label }, [text(`:${emoji.name}:`)]);
}

const imageEmojiNode = (name: string, src: string): MdNode =>
  element('img', { alt: `:${name}:`, className: ['emoji'], src, title: name.replace(/_/g, ' ') });

function emojiNodeForName(name: string, state: RenderState): MdNode | undefined {
  const custom = state.ctx.customEmojiByName(name);
  if (custom) return imageEmojiNode(name, custom.sourceUrl);
  if (name === ZULIP_EXTRA_EMOJI) return imageEmojiNode(name, ZULIP_EMOJI_IMAGE_PATH);
  const unicode = emojiByName(name);
  return unicode ? unicodeEmojiNode(unicode) : undefined;
}

const nonAscii = /[^\x00-\x7f]/;

// Stands for an element next to the text: the real server matches emoticons last, on text where every other
// inline element is already a placeholder, which is neither whitespace nor punctuation.
const elementStandIn = '\uFFFC';

const noEdges: TextEdges = { elementBefore: false, elementAfter: false };

export function findEmoji(value: string, state: RenderState, edges: TextEdges = noEdges): TextMatch[] {
  const matches: TextMatch[] = [];
  // Text a pass has taken, matched or not: later passes do not look inside it.
  let taken: Uint8Array | undefined;
  const take = (start: number, end: number) => (taken ??= new Uint8Array(value.length)).fill(1, start, end);
  const isFree = (start: number, end: number) => taken === undefined || taken.subarray(start, end).every((b) => b === 0);

  // An unknown `:name:` is taken as it is, closing colon included (":nope:smile:" stays text).
  const names = value.includes(':') ? value.matchAll(emojiNamePattern) : [];
  for (const match of names) {
    const span = { start: match.index, end: match.index + match[0].length };
    take(span.start, span.end);
    const node = emojiNodeForName(match[1] ?? '', state);
    if (node) matches.push({ ...span, nodes: [node] });
  }
  if (state.ctx.translateEmoticons) {
    // An emoticon needs whitespace, punctuation or the text's edge on both sides, and an element is none.
    const offset = edges.elementBefore ? 1 : 0;
    const framed = (edges.elementBefore ? elementStandIn : '') + value + (edges.elementAfter ? elementStandIn : '');
    for (const match of framed.matchAll(emoticonPattern)) {
      const span = { start: match.index - offset, end: match.index - offset + match[0].length };
      const emoji = emojiOfEmoticon(match[0]);
      if (!emoji || !isFree(span.start, span.end)) continue;
      take(span.start, span.end);
      matches.push({ ...span, nodes: [unicodeEmojiNode(emoji)] });
    }
  }
  // ASCII text holds no emoji: its only \p{Emoji} characters (digits, # and *) are text on their own.
  const sequences = nonAscii.test(value) ? value.matchAll(emojiSequencePattern) : [];
  for (const match of sequences) {
    const span = { start: match.index, end: match.index + match[0].length };
    if (!isFree(span.start, span.end)) continue;
    const emoji = emojiOfSequence(match[0]);
    if (emoji) matches.push({ ...span, nodes: [unicodeEmojiNode(emoji)] });
  }
  return matches.sort((a, b) => a.start - b.start);
}
