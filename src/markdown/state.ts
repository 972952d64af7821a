// What one render learns about the message while transforming it.
import type { RenderContext } from './types.js';

export interface RenderState {
  ctx: RenderContext;
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
  uploadPaths: Set<string>;
}

export function newRenderState(ctx: RenderContext): RenderState {
  return {
    ctx,
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    uploadPaths: new Set(),
  };
}
