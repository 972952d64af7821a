// Emoji in message text: `:name:` (realm emoji first, then Unicode names) and Unicode emoji characters.
import { emojiByCharacters, emojiByName, emojiSequencePattern, looksLikeEmoji, type UnicodeEmoji } from './emoji.js';
import type { RenderState } from './state.js';
import { element, text, type MdNode, type TextMatch } from './tree.js';

function unicodeEmojiNode(emoji: UnicodeEmoji): MdNode {
  const label = emoji.name.replace(/_/g, ' ');
  return element('span', { ariaLabel: label, className: ['emoji', `emoji-${emoji.code}`], role: 'img', title: label }, [text(`:${emoji.name}:`)]);
}

function emojiNodeForName(name: string, state: RenderState): MdNode | undefined {
  const custom = state.ctx.customEmojiByName(name);
  if (custom) return element('img', { alt: `:${name}:`, className: ['emoji'], src: custom.sourceUrl, title: name.replace(/_/g, ' ') });
  const unicode = emojiByName(name);
  return unicode ? unicodeEmojiNode(unicode) : undefined;
}

export function findEmoji(value: string, state: RenderState): TextMatch[] {
  const matches: TextMatch[] = [];
  const namePattern = /:([\p{L}\p{N}_+-]+):/gu;
  let match: RegExpExecArray | null;
  while ((match = namePattern.exec(value)) !== null) {
    const node = emojiNodeForName(match[1] ?? '', state);
    if (node) matches.push({ start: match.index, end: match.index + match[0].length, nodes: [node] });
    // An unknown name's closing colon may open the next name (":invalid:smile:").
    else namePattern.lastIndex = match.index + match[0].length - 1;
  }
  for (const sequence of value.matchAll(emojiSequencePattern)) {
    const start = sequence.index;
    const end = start + sequence[0].length;
    if (matches.some((m) => start < m.end && m.start < end) || !looksLikeEmoji(sequence[0])) continue;
    const emoji = emojiByCharacters(sequence[0]);
    if (emoji) matches.push({ start, end, nodes: [unicodeEmojiNode(emoji)] });
  }
  return matches.sort((a, b) => a.start - b.start);
}
