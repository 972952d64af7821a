import { errors } from '../errors.js';
import type { UserStatusChanged } from './events.js';

export const MAX_STATUS_TEXT_LENGTH = 60;

/** A custom emoji of the realm, as the decider needs it. */
export interface StatusCustomEmoji {
  id: number;
  name: string;
  deactivated: boolean;
}

/** Built-in emoji look-ups (name → code, code → canonical code) the service hands in. */
export interface EmojiCatalog {
  codeOfName(name: string): string | undefined;
  isCode(code: string): boolean;
  custom: readonly StatusCustomEmoji[];
}

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

interface StatusEmoji {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** The real server's get_emoji_data: an active custom emoji of that name first, then "zulip", then Unicode. */
function emojiNamed(name: string, catalog: EmojiCatalog): { emoji_code: string; reaction_type: string } {
  const custom = catalog.custom.find((e) => e.name === name && !e.deactivated);
  if (custom) return { emoji_code: String(custom.id), reaction_type: 'realm_emoji' };
  if (name === 'zulip') return { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' };
  const code = catalog.codeOfName(name);
  if (code !== undefined) return { emoji_code: code, reaction_type: 'unicode_emoji' };
  throw errors.badRequest(`Emoji '${name}' does not exist`);
}

/** The real server's check_emoji_request for a new status emoji. */
function checkEmoji(emoji: StatusEmoji, catalog: EmojiCatalog): void {
  switch (emoji.reaction_type) {
    case 'realm_emoji': {
      const custom = catalog.custom.find((e) => String(e.id) === emoji.emoji_code);
      if (!custom) throw errors.badRequest('Invalid custom emoji.');
      if (custom.name !== emoji.emoji_name) throw errors.badRequest('Invalid custom emoji name.');
      if (custom.deactivated) throw errors.badRequest('This custom emoji has been deactivated.');
      return;
    }
    case 'zulip_extra_emoji':
      if (emoji.emoji_code !== 'zulip') throw errors.badRequest('Invalid emoji code.');
      if (emoji.emoji_name !== emoji.emoji_code) throw errors.badRequest('Invalid emoji name.');
      return;
    case 'unicode_emoji':
      if (!catalog.isCode(emoji.emoji_code)) throw errors.badRequest('Invalid emoji code.');
      if (catalog.codeOfName(emoji.emoji_name) !== emoji.emoji_code) throw errors.badRequest('Invalid emoji name.');
      return;
    default:
      throw errors.badRequest('Invalid emoji type.');
  }
}

function emojiOf(command: UpdateUserStatus, catalog: EmojiCatalog): StatusEmoji | null {
  const { emoji_name, emoji_code, reaction_type } = command;
  if (emoji_name === '') return { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  if (emoji_name === undefined) {
    if (emoji_code || reaction_type) throw errors.badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    return null;
  }
  const named = emoji_code === undefined || reaction_type === undefined ? emojiNamed(emoji_name, catalog) : undefined;
  const emoji = { emoji_name, emoji_code: emoji_code ?? named!.emoji_code, reaction_type: reaction_type ?? named!.reaction_type };
  checkEmoji(emoji, catalog);
  return emoji;
}

/** Pure: POST /users/me/status → one UserStatusChanged, or the real server's error. */
export function decideUserStatus(command: UpdateUserStatus, catalog: EmojiCatalog): UserStatusChanged[] {
  if (command.status_text !== undefined && [...command.status_text].length > MAX_STATUS_TEXT_LENGTH) {
    throw errors.badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  const status_text = command.status_text?.trim();
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
