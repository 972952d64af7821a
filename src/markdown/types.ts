// Public types of the Markdown renderer; index.ts re-exports them.
import type { RenderContextSnapshot } from './context-snapshot.js';

export interface MentionableUser {
  id: number;
  fullName: string;
  email: string;
  isActive?: boolean;
}
export interface MentionableGroup {
  id: number;
  name: string;
}
export interface LinkableChannel {
  id: number;
  name: string;
}
/** urlTemplate is RFC 6570; the pattern's named groups are inserted as {name}. */
export interface Linkifier {
  id: number;
  pattern: string;
  urlTemplate: string;
}
export interface CustomEmoji {
  id: number;
  name: string;
  sourceUrl: string;
}
export interface RenderContext {
  /** e.g. "http://localhost:9991" (no trailing slash) */
  realmUrl: string;
  /** exact full-name match (case-insensitive); may return several */
  userByName(name: string): MentionableUser[];
  userById(id: number): MentionableUser | undefined;
  groupByName(name: string): MentionableGroup | undefined;
  channelByName(name: string): LinkableChannel | undefined;
  /** applied in this order */
  linkifiers: Linkifier[];
  customEmojiByName(name: string): CustomEmoji | undefined;
  /** the sender's `translate_emoticons` setting: `:)` renders as `:smile:` */
  translateEmoticons?: boolean;
  /** the moment of rendering: dates without a year, day or time take them from it (defaults to the clock) */
  now?: Date;
  /** The realm's default_code_block_language: the language of fenced code blocks that name none. */
  defaultCodeBlockLanguage?: string;
  /**
   * The first message the sender can read in each topic the content links to, by topicLinkKey: a topic link then
   * points at it (`/with/<id>`), as the real server's do. Absent or without the topic: a plain topic link.
   */
  topicLinkTargets?: ReadonlyMap<string, number>;
  /** The same context as plain data: present, a large message may render in a worker thread. */
  snapshot?: RenderContextSnapshot;
}
export interface RenderResult {
  html: string;
  /** users mentioned by non-silent user mentions */
  mentionedUserIds: number[];
  /** groups mentioned (non-silent) */
  mentionedGroupIds: number[];
  /** @**all**, @**everyone**, @**channel**, @**stream** (non-silent) */
  streamWildcard: boolean;
  /** @**topic** (non-silent) */
  topicWildcard: boolean;
  hasLink: boolean;
  hasImage: boolean;
  /** a link to /user_uploads/ */
  hasAttachment: boolean;
  /** content starts with "/me " */
  isMeMessage: boolean;
  /** paths like "/user_uploads/2/ab/xyz/file.png" referenced by the message */
  linkedUploadPaths: string[];
}

/** The key of a topic in RenderContext.topicLinkTargets (topics compare case-insensitively). */
export const topicLinkKey = (channelId: number, topic: string): string => `${channelId}\u0000${topic.toLowerCase()}`;
