import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { Role, isAdminRole } from '../roles.js';
import { hasPolicy, type ChannelActor } from '../channels/decider.js';
import type { RealmEmojiEvent } from './events.js';

export interface RealmEmojiRow {
  id: number;
  name: string;
  author_id: number | null;
  file_name: string;
  /** where the still image of an animated emoji is stored; null when it is not animated */
  still_path_id: string | null;
  deactivated: boolean;
}

export interface RealmEmojiState {
  realm_id: number;
  /** every emoji of the realm, deactivated ones included */
  emoji: readonly RealmEmojiRow[];
  /** 1 members, 2 administrators, 3 full members, 4 moderators */
  add_custom_emoji_policy: number;
}

export interface EmojiUpload {
  content_type: string;
  size: number;
}

export type RealmEmojiCommand =
  | {
    type: 'AddRealmEmoji';
    actor: ChannelActor;
    /** the uploader is a bot: adding emoji is for members and administrators */
    actor_is_bot: boolean;
    emoji_id: number;
    /** as given in the URL; spaces become underscores */
    name: string;
    files: readonly EmojiUpload[];
    max_size_mib: number;
    /** where the bytes are (or will be) stored */
    path_id: string;
    /** where the still first frame of an animated image is (or will be) stored; null when not animated */
    still_path_id: string | null;
    /** is `name` a built-in (Unicode) emoji name */
    overrides_builtin: boolean;
  }
  | { type: 'DeactivateRealmEmoji'; actor: ChannelActor; name: string };

/** Image types accepted for custom emoji, with the file extension each is stored under. */
export const EMOJI_IMAGE_TYPES: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** The real server's check_valid_emoji_name, with its messages. */
export function checkEmojiName(name: string): void {
  if (name === '') throw errors.badRequest('Emoji name is missing');
  if (/^[0-9a-z\-_]+$/.test(name)) {
    if (/[-_]$/.test(name)) throw errors.badRequest('Emoji names must end with either a letter or digit.');
    return;
  }
  throw errors.badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

export const normalizeEmojiName = (raw: string): string => raw.trim().replace(/ /g, '_');

export const activeEmojiNamed = (state: RealmEmojiState, name: string): RealmEmojiRow | undefined =>
  state.emoji.find((e) => e.name === name && !e.deactivated);

/** Pure: a command on a realm's custom emoji gives the events to record, or a catalog error. */
export function decideRealmEmoji(command: RealmEmojiCommand, state: RealmEmojiState): RealmEmojiEvent[] {
  const realm_id = state.realm_id;
  switch (command.type) {
    case 'AddRealmEmoji': {
      // The order of the checks is the real server's (upload_emoji).
      if (command.actor.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
      if (command.actor_is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      const name = normalizeEmojiName(command.name);
      checkEmojiName(name);
      if (!hasPolicy(state.add_custom_emoji_policy, command.actor)) throw errors.badRequest('Insufficient permission');
      if (activeEmojiNamed(state, name)) throw errors.badRequest('A custom emoji with this name already exists.');
      if (command.files.length !== 1) throw errors.badRequest('You must upload exactly one file.');
      if (command.overrides_builtin && !isAdminRole(command.actor.role)) throw errors.badRequest('Only administrators can override default emoji.');
      const file = command.files[0]!;
      if (file.size > command.max_size_mib * 1024 * 1024) {
        throw errors.badRequest(`Uploaded file is larger than the allowed limit of ${command.max_size_mib} MiB`);
      }
      const extension = EMOJI_IMAGE_TYPES[file.content_type];
      if (extension === undefined) throw errors.badRequest('Invalid image format');
      return [{
        type: 'RealmEmojiAdded',
        data: {
          realm_id, emoji_id: command.emoji_id, name, author_id: command.actor.user_id,
          file_name: `${command.emoji_id}.${extension}`, path_id: command.path_id, content_type: file.content_type,
          still_path_id: command.still_path_id,
        },
      }];
    }
    case 'DeactivateRealmEmoji': {
      const emoji = activeEmojiNamed(state, command.name);
      if (!emoji) throw new ApiError('BAD_REQUEST', 404, `Emoji '${command.name}' does not exist`);
      if (!isAdminRole(command.actor.role) && emoji.author_id !== command.actor.user_id) {
        throw errors.badRequest('Must be an organization administrator or emoji author');
      }
      return [{ type: 'RealmEmojiDeactivated', data: { realm_id, emoji_id: emoji.id, name: emoji.name } }];
    }
    default:
      return assertNever(command);
  }
}

/** Pure: the realm's emoji after one event. */
export function evolveRealmEmoji(list: readonly RealmEmojiRow[], event: RealmEmojiEvent): RealmEmojiRow[] {
  switch (event.type) {
    case 'RealmEmojiAdded': {
      const { emoji_id: id, name, author_id, file_name, still_path_id } = event.data;
      return [...list, { id, name, author_id, file_name, still_path_id, deactivated: false }];
    }
    case 'RealmEmojiDeactivated':
      return list.map((e) => (e.id === event.data.emoji_id ? { ...e, deactivated: true } : e));
    default:
      return assertNever(event);
  }
}
