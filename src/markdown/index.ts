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
export { topicLinkKey } from './types.js';
export { renderMarkdown } from './render.js';
export { renderTopicLinks } from './topic-links.js';
import { contextFromSnapshot, emptySnapshot } from './context-snapshot.js';
import type { RenderContext } from './types.js';

/** No users, groups, channels, linkifiers or custom emoji: for tests and POST /messages/render without data. */
export const emptyRenderContext = (realmUrl: string): RenderContext => contextFromSnapshot(emptySnapshot(realmUrl));
export { MarkdownRenderingError } from './limits.js';
export { renderMarkdownAsync } from './render-pool.js';
