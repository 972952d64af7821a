// What Markdown recognizes as emoji syntax; the names and codes come from the catalogue (src/emoji).
import { codeOfCharacters, emoticonTranslations, unicodeEmojiByCode, unicodeEmojiByName, type UnicodeEmoji } from '../emoji/catalogue.js';

export type { UnicodeEmoji };

/** `:name:` — the real server's `[\w\-\+]` between colons, with Python's Unicode `\w`. */
export const emojiNamePattern = /:([\p{L}\p{N}_+-]+):/gu;

// One possible emoji (Unicode TR51's EBNF, as the real server matches it): a flag, or an emoji with an
// optional modifier, keycap or tag run, joined by ZWJ to more of the same. A candidate that is not one
// catalogue code is left alone as a whole (a skin-toned or unknown ZWJ sequence stays text).
const element = String.raw`\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const flag = String.raw`\p{Regional_Indicator}\p{Regional_Indicator}`;
export const emojiSequencePattern = new RegExp(`${flag}|${element}(?:\\u200D(?:${flag}|${element}))*`, 'gu');

// One character without emoji presentation (an arrow, ©, a digit, a bare keycap) is text, not emoji.
const textPresentation = /^\P{Emoji_Presentation}\u20E3?$/u;

/** The catalogue emoji a matched sequence spells, unless it is a text-presentation character. */
export function emojiOfSequence(sequence: string): UnicodeEmoji | undefined {
  if (textPresentation.test(sequence)) return undefined;
  return unicodeEmojiByCode(codeOfCharacters(sequence));
}

export function emojiByName(name: string): UnicodeEmoji | undefined {
  return unicodeEmojiByName(name);
}

// An emoticon counts only between terminal symbols (or the ends of the text), as in the real server's
// compose box: "(:" in "f(:x)" is not a smile.
const terminal = String.raw`,.;?!()\[\] "'\n\t`;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const emoticonPattern = new RegExp(
  `(?<![^${terminal}])(${emoticonTranslations.map((e) => escapeRegExp(e.emoticon)).join('|')})(?![^${terminal}])`,
  'g',
);
const emoticonEmoji = new Map(emoticonTranslations.map((e) => [e.emoticon, { code: e.code, name: e.name }]));

export function emojiOfEmoticon(emoticon: string): UnicodeEmoji | undefined {
  return emoticonEmoji.get(emoticon);
}
