import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { emojiByCode, emojiByName } from '../markdown/index.js';
import { listRealmEmojiRows } from '../read/realm-emoji.js';

export interface ReactionParams {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export interface ReactionEmoji {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/**
 * Resolves the emoji of a reaction request against the built-in and the realm's custom emoji, the
 * way the real server does: a name alone means the realm's active custom emoji of that name first,
 * then the built-in one. A new custom emoji reaction must name an existing, active emoji by its id
 * (emoji_code) and name; voting for a custom emoji reaction already on the message is always
 * allowed (even when the emoji has been deactivated since) and takes that reaction's name.
 */
export async function resolveReactionEmoji(db: Db, realmId: number, messageId: number, params: ReactionParams, forRemoval: boolean): Promise<ReactionEmoji> {
  const customNeeded = params.reaction_type === 'realm_emoji' || (params.reaction_type === undefined && params.emoji_name !== undefined);
  const custom = customNeeded ? await listRealmEmojiRows(db, realmId) : [];
  const activeByName = params.emoji_name === undefined ? undefined : custom.find((e) => e.name === params.emoji_name && !e.deactivated);
  const type = params.reaction_type ?? (activeByName ? 'realm_emoji' : 'unicode_emoji');
  if (type === 'realm_emoji') {
    if (params.emoji_code === undefined) {
      if (params.emoji_name === undefined) throw errors.badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
      if (!activeByName) throw errors.badRequest(`Emoji '${params.emoji_name}' does not exist`);
      return { emoji_name: activeByName.name, emoji_code: String(activeByName.id), reaction_type: type };
    }
    const emoji_code = params.emoji_code;
    if (forRemoval) return { emoji_name: params.emoji_name ?? '', emoji_code, reaction_type: type };
    const vote = await db
      .selectFrom('reactions')
      .select('emoji_name')
      .where('message_id', '=', messageId)
      .where('reaction_type', '=', type)
      .where('emoji_code', '=', emoji_code)
      .executeTakeFirst();
    if (vote) return { emoji_name: vote.emoji_name, emoji_code, reaction_type: type };
    const emoji = custom.find((e) => String(e.id) === emoji_code);
    if (!emoji) throw errors.badRequest('Invalid custom emoji.');
    if (params.emoji_name !== undefined && emoji.name !== params.emoji_name) throw errors.badRequest('Invalid custom emoji name.');
    if (emoji.deactivated) throw errors.badRequest('This custom emoji has been deactivated.');
    return { emoji_name: emoji.name, emoji_code, reaction_type: type };
  }
  if (type === 'zulip_extra_emoji' || type === 'service_extra_emoji') {
    const name = params.emoji_name ?? params.emoji_code ?? '';
    if (name !== 'zulip' || (params.emoji_code !== undefined && params.emoji_code !== 'zulip')) throw errors.badRequest('Invalid emoji code');
    return { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' };
  }
  if (type !== 'unicode_emoji') throw errors.badRequest('Invalid emoji type');
  if (params.emoji_code !== undefined) {
    const byCode = emojiByCode(params.emoji_code);
    if (!byCode) throw errors.badRequest('Invalid emoji code');
    const byName = params.emoji_name !== undefined ? emojiByName(params.emoji_name) : undefined;
    if (params.emoji_name !== undefined && !forRemoval && byName?.code !== byCode.code) throw errors.badRequest('Invalid emoji name');
    return { emoji_name: params.emoji_name ?? byCode.name, emoji_code: byCode.code, reaction_type: type };
  }
  if (params.emoji_name === undefined) throw errors.badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
  const found = emojiByName(params.emoji_name);
  if (!found) throw errors.badRequest(`Emoji '${params.emoji_name}' does not exist`);
  return { emoji_name: params.emoji_name, emoji_code: found.code, reaction_type: type };
}
