// The one Unicode emoji catalogue of the server: the real Zulip server's names over the emoji set it
// builds from. Loaded once at import; Markdown, reactions, user status, custom emoji name clashes and the
// served emoji data document all read it from here.
//
// - Names: zulip-emoji.json (the real server's name table, Apache-2.0, see README.md here): per unqualified
//   code point a canonical name and aliases, its emoticon translations and its remapped legacy codes. A name
//   outside this table is not a Unicode emoji name (`:skin-tone-2:`, `:man-girl-girl:` stay text).
// - Set: the npm package emoji-datasource-google (the version the real server builds from): which codes have
//   an image, their categories and picker order.
import { createRequire } from 'node:module';
import { shippedPath } from '../source-root.js';

interface NameInfo {
  canonical_name: string;
  aliases: string[];
}
interface ZulipEmojiNames {
  emoji_name_maps: Record<string, NameInfo>;
  emoticon_conversions: Record<string, string>;
  remapped_emojis: Record<string, string>;
}
interface DatasourceEmoji {
  unified: string;
  category: string;
  sort_order: number;
  has_img_google: boolean;
}

const require = createRequire(import.meta.url);
const names = require(shippedPath('src/emoji/zulip-emoji.json')) as ZulipEmojiNames;
const datasource = require('emoji-datasource-google/emoji.json') as DatasourceEmoji[];

/** A Unicode emoji: `code` is dash-separated lowercase hex without U+FE0F ("1f642", "0023-20e3"). */
export interface UnicodeEmoji {
  readonly code: string;
  /** the name it was looked up by, or the canonical name when looked up by code or characters */
  readonly name: string;
}

/** The real server's "code point" of characters: lowercase hex per character, U+FE0F left out. */
export function codeOfCharacters(characters: string): string {
  const parts: string[] = [];
  for (const ch of characters) {
    const cp = ch.codePointAt(0)!;
    if (cp !== 0xfe0f) parts.push(cp.toString(16).padStart(4, '0'));
  }
  return parts.join('-');
}

const codeOfDatasource = (emoji: DatasourceEmoji): string =>
  emoji.unified.toLowerCase().split('-').filter((part) => part !== 'fe0f').join('-');

const nameToCode = new Map<string, string>();
const codeToNames = new Map<string, readonly string[]>();
const withImage = new Map<string, DatasourceEmoji>();
for (const emoji of datasource) if (emoji.has_img_google) withImage.set(codeOfDatasource(emoji), emoji);

for (const [code, info] of Object.entries(names.emoji_name_maps)) {
  // The real server refuses to build when a named emoji has no image; so do we, at start-up.
  if (!withImage.has(code)) throw new Error(`emoji catalogue: ${code} (${info.canonical_name}) has no image in emoji-datasource-google`);
  const all = [info.canonical_name, ...info.aliases];
  codeToNames.set(code, all);
  for (const name of all) nameToCode.set(name, code);
}

/** The Unicode emoji called `name` (canonical name or alias), e.g. "smile" → 1f642. */
export function unicodeEmojiByName(name: string): UnicodeEmoji | undefined {
  const code = nameToCode.get(name);
  return code === undefined ? undefined : { code, name };
}

/** The Unicode emoji with exactly this code, with its canonical name; a code with U+FE0F is not one. */
export function unicodeEmojiByCode(code: string): UnicodeEmoji | undefined {
  const all = codeToNames.get(code);
  return all === undefined ? undefined : { code, name: all[0]! };
}

/** Every name of a code, the canonical one first. */
export function unicodeEmojiNames(code: string): readonly string[] | undefined {
  return codeToNames.get(code);
}

/** The server's emoji data document (what `server_emoji_data_url` serves): `{ code_to_names }`. */
export function emojiDataDocument(): { code_to_names: Record<string, string[]> } {
  const code_to_names: Record<string, string[]> = {};
  for (const [code, all] of codeToNames) code_to_names[code] = [...all];
  return { code_to_names };
}

/** The emoji picker's catalogue: category → codes, in the set's sort order. */
export function emojiCategories(): Record<string, string[]> {
  const byCategory = new Map<string, DatasourceEmoji[]>();
  for (const [code, emoji] of withImage) {
    if (!codeToNames.has(code)) continue;
    byCategory.set(emoji.category, [...(byCategory.get(emoji.category) ?? []), emoji]);
  }
  const out: Record<string, string[]> = {};
  for (const [category, list] of byCategory) out[category] = list.sort((a, b) => a.sort_order - b.sort_order).map(codeOfDatasource);
  return out;
}

/**
 * A legacy code of the real server's old image farm → the code it stands for now ("1f1fa" → the US flag
 * "1f1fa-1f1f8"); any other code is returned as it is.
 */
export function remappedCode(code: string): string {
  return Object.hasOwn(names.remapped_emojis, code) ? names.remapped_emojis[code]! : code;
}

/** Emoticons a user with `translate_emoticons` on has turned into emoji, with the emoji name each becomes. */
export const emoticonTranslations: ReadonlyArray<{ emoticon: string; name: string; code: string }> = Object.entries(
  names.emoticon_conversions,
).map(([emoticon, colons]) => {
  const name = colons.slice(1, -1);
  const code = nameToCode.get(name);
  if (code === undefined) throw new Error(`emoji catalogue: emoticon ${emoticon} names unknown emoji ${colons}`);
  return { emoticon, name, code };
});

/** The name Zulip's own extra emoji (`reaction_type` zulip_extra_emoji) goes by; its code is the same. */
export const ZULIP_EXTRA_EMOJI = 'zulip';
/** Where its image is, as a path (the real server's, so that rendered messages survive an export). */
export const ZULIP_EMOJI_IMAGE_PATH = '/static/generated/emoji/images/emoji/unicode/zulip.png';

/**
 * The name a stored Unicode reaction or status emoji is shown with: its own when that still names its code,
 * else the code's canonical name (names stored before this catalogue came from another table, where e.g.
 * "smile" was U+1F604). A code outside the catalogue keeps its name.
 */
export function currentUnicodeEmojiName(code: string, name: string): string {
  const all = codeToNames.get(code);
  if (all === undefined || all.includes(name)) return name;
  return all[0]!;
}
