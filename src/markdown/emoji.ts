// Unicode emoji names and codes, built from emojibase-data at load time.
//
// Zulip names emoji after its own (mostly Google-derived) list; emojibase's shortcode presets are the
// nearest well-kept source. Known gaps: Zulip renamed a few emoji (e.g. `smile` is U+1F642 there).
import { createRequire } from 'node:module';

interface EmojibaseEmoji {
  hexcode: string;
  emoji: string;
  version: number;
}
type ShortcodeMap = Record<string, string | string[]>;

const require = createRequire(import.meta.url);
const data = require('emojibase-data/en/data.json') as EmojibaseEmoji[];
// The emojibase preset comes first: its primary names ("poop", "robot", "heart") are Zulip's.
const presets: ShortcodeMap[] = ['emojibase', 'github', 'iamcal', 'joypixels', 'cldr'].map(
  (preset) => require(`emojibase-data/en/shortcodes/${preset}.json`) as ShortcodeMap,
);

// Zulip's emoji set stops at Unicode 15.0: later sequences (e.g. 15.1's lime) stay plain text.
const maxEmojiVersion = 15;

export interface UnicodeEmoji {
  /** dash-separated lowercase hex codepoints without variation selectors, e.g. "1f441-200d-1f5e8" */
  code: string;
  name: string;
}

const byName = new Map<string, string>();
const canonicalName = new Map<string, string>();
const byCharacters = new Map<string, string>();

const stripVariation = (s: string): string => s.replace(/\uFE0F/g, '');
const toCode = (hexcode: string): string =>
  hexcode
    .toLowerCase()
    .split('-')
    .filter((part) => part !== 'fe0f')
    .join('-');

const included = data.filter((emoji) => emoji.version <= maxEmojiVersion);
for (const emoji of included) byCharacters.set(stripVariation(emoji.emoji), toCode(emoji.hexcode));
// Preset by preset, so that a name taken by an earlier preset keeps that preset's meaning.
for (const preset of presets) {
  for (const emoji of included) {
    const entry = preset[emoji.hexcode];
    if (entry === undefined) continue;
    const code = toCode(emoji.hexcode);
    const names = Array.isArray(entry) ? entry : [entry];
    for (const name of names) if (!byName.has(name)) byName.set(name, code);
    if (!canonicalName.has(code)) {
      // The shortest name is the colloquial one ("smiley" over "grinning_face_with_big_eyes").
      canonicalName.set(code, names.reduce((a, b) => (b.length < a.length ? b : a)));
    }
  }
}

export function emojiByName(name: string): UnicodeEmoji | undefined {
  const code = byName.get(name);
  return code === undefined ? undefined : { code, name };
}

export function emojiByCode(code: string): UnicodeEmoji | undefined {
  const normalized = toCode(code);
  const name = canonicalName.get(normalized);
  return name === undefined ? undefined : { code: normalized, name };
}

/** The emoji a run of characters spells, when the whole run is one known emoji. */
export function emojiByCharacters(characters: string): UnicodeEmoji | undefined {
  const code = byCharacters.get(stripVariation(characters));
  return code === undefined ? undefined : emojiByCode(code);
}

// One candidate emoji sequence: a keycap, a flag, or pictographs joined by ZWJ. A candidate that is not
// one known emoji is left alone as a whole, the way Zulip leaves unknown ZWJ sequences untouched.
export const emojiSequencePattern =
  /[#*0-9]\uFE0F?\u20E3|\p{Regional_Indicator}{2}|\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]?(?:\u200D\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]?)*/gu;

/** Text-presentation symbols (©, ™, ↔) only count as emoji when something marks them as such. */
export function looksLikeEmoji(sequence: string): boolean {
  return /^\p{Emoji_Presentation}/u.test(sequence) || /[\uFE0F\u200D\u20E3]/.test(sequence);
}

/** Every Unicode emoji code with its names, the canonical one first (the server's emoji data file). */
export function emojiNamesByCode(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [code, name] of canonicalName) out[code] = [name];
  for (const [name, code] of byName) if (name !== canonicalName.get(code)) out[code]?.push(name);
  return out;
}
