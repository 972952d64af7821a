// What one render learns about the message while transforming it.
import type { PendingCodeBlock } from './code-highlight.js';
import type { RenderBudget } from './limits.js';
import type { RenderContext } from './types.js';

export interface RenderState {
  ctx: RenderContext;
  budget: RenderBudget;
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
  uploadPaths: Set<string>;
  codeBlocks: PendingCodeBlock[];
}

export function newRenderState(ctx: RenderContext, budget: RenderBudget): RenderState {
  return {
    ctx,
    budget,
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    uploadPaths: new Set(),
    codeBlocks: [],
  };
}
