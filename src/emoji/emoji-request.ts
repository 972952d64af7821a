// The real server's two emoji checks, shared by reactions and user status: which emoji a name means in a
// realm (get_emoji_data) and whether a (name, code, type) triple names a usable emoji (check_emoji_request).
// Pure: the realm's custom emoji and the built-in look-ups are handed in.
import { errors } from '../domain/errors.js';
import { unicodeEmojiByCode, unicodeEmojiByName, ZULIP_EXTRA_EMOJI } from './catalogue.js';

/** A custom emoji of the realm, as the checks need it. */
export interface RealmEmojiRef {
  id: number;
  name: string;
  deactivated: boolean;
}

/** Built-in emoji look-ups (name → code; is this exact code an emoji) plus the realm's custom emoji. */
export interface EmojiCatalog {
  codeOfName(name: string): string | undefined;
  isCode(code: string): boolean;
  custom: readonly RealmEmojiRef[];
}

/** The server's catalogue with a realm's custom emoji. */
export const builtinEmojiCatalog = (custom: readonly RealmEmojiRef[]): EmojiCatalog => ({
  codeOfName: (name) => unicodeEmojiByName(name)?.code,
  isCode: (code) => unicodeEmojiByCode(code) !== undefined,
  custom,
});

export interface EmojiTriple {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** get_emoji_data: an active custom emoji of that name first, then Zulip's own, then a Unicode name. */
export function emojiDataByName(name: string, catalog: EmojiCatalog): { emoji_code: string; reaction_type: string } {
  const custom = catalog.custom.find((e) => e.name === name && !e.deactivated);
  if (custom) return { emoji_code: String(custom.id), reaction_type: 'realm_emoji' };
  if (name === ZULIP_EXTRA_EMOJI) return { emoji_code: ZULIP_EXTRA_EMOJI, reaction_type: 'zulip_extra_emoji' };
  const code = catalog.codeOfName(name);
  if (code !== undefined) return { emoji_code: code, reaction_type: 'unicode_emoji' };
  throw errors.badRequest(`Emoji '${name}' does not exist`);
}

/**
 * check_emoji_request for a new use of an emoji. `invalidCode` is the wording of a bad Unicode code: the
 * published reaction endpoints say "Invalid emoji code", the server's own check adds a full stop.
 */
export function checkEmojiRequest(emoji: EmojiTriple, catalog: EmojiCatalog, invalidCode = 'Invalid emoji code.'): void {
  switch (emoji.reaction_type) {
    case 'realm_emoji': {
      const custom = catalog.custom.find((e) => String(e.id) === emoji.emoji_code);
      if (!custom) throw errors.badRequest('Invalid custom emoji.');
      if (custom.name !== emoji.emoji_name) throw errors.badRequest('Invalid custom emoji name.');
      if (custom.deactivated) throw errors.badRequest('This custom emoji has been deactivated.');
      return;
    }
    case 'zulip_extra_emoji':
      if (emoji.emoji_code !== ZULIP_EXTRA_EMOJI) throw errors.badRequest(invalidCode);
      if (emoji.emoji_name !== emoji.emoji_code) throw errors.badRequest('Invalid emoji name.');
      return;
    case 'unicode_emoji':
      if (!catalog.isCode(emoji.emoji_code)) throw errors.badRequest(invalidCode);
      if (catalog.codeOfName(emoji.emoji_name) !== emoji.emoji_code) throw errors.badRequest('Invalid emoji name.');
      return;
    default:
      throw errors.badRequest('Invalid emoji type.');
  }
}
