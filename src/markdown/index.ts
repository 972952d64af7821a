// Zulip-flavoured Markdown → sanitized HTML, plus what the message mentions and links to.
export type {
  CustomEmoji,
  Linkifier,
  LinkableChannel,
  MentionableGroup,
  MentionableUser,
  RenderContext,
  RenderResult,
} from './types.js';
export { renderMarkdown } from './render.js';
export { renderTopicLinks } from './linkifiers.js';
import type { RenderContext } from './types.js';
import { emojiByCode as lookupByCode, emojiByName as lookupByName } from './emoji.js';

/** No users, groups, channels, linkifiers or custom emoji: for tests and POST /messages/render without data. */
export const emptyRenderContext = (realmUrl: string): RenderContext => ({
  realmUrl,
  userByName: () => [],
  userById: () => undefined,
  groupByName: () => undefined,
  channelByName: () => undefined,
  linkifiers: [],
  customEmojiByName: () => undefined,
});

/** A Unicode emoji by name ("smile", "+1", "thumbs_up"); code is like "1f600". */
export function emojiByName(name: string): { code: string; name: string } | undefined {
  return lookupByName(name);
}

/** A Unicode emoji by code ("1f600"), with its canonical name. */
export function emojiByCode(code: string): { code: string; name: string } | undefined {
  return lookupByCode(code);
}
export { MarkdownRenderingError } from './limits.js';
