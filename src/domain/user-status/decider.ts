import { errors } from '../errors.js';
import { checkEmojiRequest, emojiDataByName, type EmojiCatalog, type EmojiTriple } from '../../emoji/emoji-request.js';
import type { UserStatusChanged } from './events.js';

export const MAX_STATUS_TEXT_LENGTH = 60;

export type { EmojiCatalog, RealmEmojiRef as StatusCustomEmoji } from '../../emoji/emoji-request.js';

export interface UpdateUserStatus {
  type: 'UpdateUserStatus';
  user_id: number;
  realm_id: number;
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

function emojiOf(command: UpdateUserStatus, catalog: EmojiCatalog): EmojiTriple | null {
  const { emoji_name, emoji_code, reaction_type } = command;
  if (emoji_name === '') return { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  if (emoji_name === undefined) {
    if (emoji_code || reaction_type) throw errors.badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    return null;
  }
  const named = emoji_code === undefined || reaction_type === undefined ? emojiDataByName(emoji_name, catalog) : undefined;
  const emoji = { emoji_name, emoji_code: emoji_code ?? named!.emoji_code, reaction_type: reaction_type ?? named!.reaction_type };
  checkEmojiRequest(emoji, catalog);
  return emoji;
}

/** Pure: POST /users/me/status → one UserStatusChanged, or the real server's error. */
export function decideUserStatus(command: UpdateUserStatus, catalog: EmojiCatalog): UserStatusChanged[] {
  // Surrounding whitespace is dropped before the length is checked, as the real server does.
  const status_text = command.status_text?.trim();
  if (status_text !== undefined && [...status_text].length > MAX_STATUS_TEXT_LENGTH) {
    throw errors.badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  if (command.away === undefined && status_text === undefined && command.emoji_name === undefined) {
    throw errors.badRequest('Client did not pass any new values.');
  }
  const emoji = emojiOf(command, catalog);
  return [{
    type: 'UserStatusChanged',
    data: {
      user_id: command.user_id,
      realm_id: command.realm_id,
      away: command.away ?? null,
      status_text: status_text ?? null,
      emoji_name: emoji?.emoji_name ?? null,
      emoji_code: emoji?.emoji_code ?? null,
      reaction_type: emoji?.reaction_type ?? null,
    },
  }];
}
