import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { currentUnicodeEmojiName } from '../emoji/catalogue.js';
import { builtinEmojiCatalog, checkEmojiRequest, emojiDataByName, type EmojiCatalog, type EmojiTriple } from '../emoji/emoji-request.js';
import { listRealmEmojiRows } from '../read/realm-emoji.js';

export interface ReactionParams {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export type ReactionEmoji = EmojiTriple;

export interface ResolvedReaction {
  emoji: ReactionEmoji;
  /** the user already has this reaction (same code and type) on the message */
  existing: boolean;
}

// The published reaction endpoints word a bad Unicode code without a full stop.
const INVALID_CODE = 'Invalid emoji code';

/**
 * Resolves the emoji of a reaction request the way the real server does. Adding: a missing code or type
 * comes from the name (the realm's active custom emoji, then `zulip`, then a Unicode name); the user's own
 * reaction with that code and type is a duplicate; a reaction someone else made with it is a vote that
 * takes that reaction's name unchecked (it may be a deactivated custom emoji, or a Unicode name from an
 * older name table); only a new reaction is checked. Removing: by code (and type, `unicode_emoji` unless
 * given), or by name alone, which also gives the type; the user's own reaction is removed whatever its
 * code, and an unknown Unicode code that is not one is "Invalid emoji code".
 */
export async function resolveReaction(db: Db, realmId: number, messageId: number, userId: number, params: ReactionParams, op: 'add' | 'remove'): Promise<ResolvedReaction> {
  let catalog: EmojiCatalog | undefined;
  const realmCatalog = async () => (catalog ??= builtinEmojiCatalog(await listRealmEmojiRows(db, realmId)));
  let { emoji_code } = params;
  // SPEC's name for Zulip's own extra emoji type; stored under the real server's name.
  let reaction_type = params.reaction_type === 'service_extra_emoji' ? 'zulip_extra_emoji' : params.reaction_type;
  const name = params.emoji_name;
  if (op === 'remove' && emoji_code === undefined && name === undefined) {
    throw errors.badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
  }
  if (name !== undefined && (emoji_code === undefined || (op === 'add' && reaction_type === undefined))) {
    const data = emojiDataByName(name, await realmCatalog());
    emoji_code ??= data.emoji_code;
    reaction_type ??= data.reaction_type;
  }
  const code = emoji_code!;
  const type = reaction_type ?? 'unicode_emoji';
  const reactions = await db
    .selectFrom('reactions')
    .select(['user_id', 'emoji_name'])
    .where('message_id', '=', messageId)
    .where('reaction_type', '=', type)
    .where('emoji_code', '=', code)
    .execute();
  // A name stored before the current name table reads as the code's name now (see eventstore/upcast.ts).
  const storedName = (stored: string) => (type === 'unicode_emoji' ? currentUnicodeEmojiName(code, stored) : stored);
  const mine = reactions.find((r) => r.user_id === userId);
  if (mine) return { emoji: { emoji_name: storedName(mine.emoji_name), emoji_code: code, reaction_type: type }, existing: true };
  if (op === 'remove') {
    if (type === 'unicode_emoji' && !builtinEmojiCatalog([]).isCode(code)) throw errors.badRequest(INVALID_CODE);
    return { emoji: { emoji_name: name ?? '', emoji_code: code, reaction_type: type }, existing: false };
  }
  const vote = reactions[0];
  if (vote) return { emoji: { emoji_name: storedName(vote.emoji_name), emoji_code: code, reaction_type: type }, existing: false };
  const emoji = { emoji_name: name!, emoji_code: code, reaction_type: type };
  checkEmojiRequest(emoji, await realmCatalog(), INVALID_CODE);
  return { emoji, existing: false };
}
