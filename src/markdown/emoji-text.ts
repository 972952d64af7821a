// Emoji in message text, in the real server's order: `:name:` (the realm's custom emoji, then Zulip's own,
// then Unicode names), then emoticons when the sender translates them, then Unicode emoji characters.
import { ZULIP_EMOJI_IMAGE_PATH, ZULIP_EXTRA_EMOJI } from '../emoji/catalogue.js';
import { emojiByName, emojiNamePattern, emojiOfEmoticon, emojiOfSequence, emojiSequencePattern, emoticonPattern, type UnicodeEmoji } from './emoji.js';
import type { RenderState } from './state.js';
import { element, text, type MdNode, type TextMatch } from './tree.js';

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

export function findEmoji(value: string, state: RenderState): TextMatch[] {
  const matches: TextMatch[] = [];
  // Text a pass has taken, matched or not: later passes do not look inside it.
  let taken: Uint8Array | undefined;
  const take = (start: number, end: number) => (taken ??= new Uint8Array(value.length)).fill(1, start, end);
  const isFree = (start: number, end: number) => taken === undefined || taken.subarray(start, end).every((b) => b === 0);

  // An unknown `:name:` is taken as it is, closing colon included (":nope:smile:" stays text).
  for (const match of value.matchAll(emojiNamePattern)) {
    const span = { start: match.index, end: match.index + match[0].length };
    take(span.start, span.end);
    const node = emojiNodeForName(match[1] ?? '', state);
    if (node) matches.push({ ...span, nodes: [node] });
  }
  if (state.ctx.translateEmoticons) {
    for (const match of value.matchAll(emoticonPattern)) {
      const span = { start: match.index, end: match.index + match[0].length };
      const emoji = emojiOfEmoticon(match[0]);
      if (!emoji || !isFree(span.start, span.end)) continue;
      take(span.start, span.end);
      matches.push({ ...span, nodes: [unicodeEmojiNode(emoji)] });
    }
  }
  for (const match of value.matchAll(emojiSequencePattern)) {
    const span = { start: match.index, end: match.index + match[0].length };
    if (!isFree(span.start, span.end)) continue;
    const emoji = emojiOfSequence(match[0]);
    if (emoji) matches.push({ ...span, nodes: [unicodeEmojiNode(emoji)] });
  }
  return matches.sort((a, b) => a.start - b.start);
}
