// Messages between the render pool and its worker threads.
import type { RenderContextSnapshot } from './context-snapshot.js';
import type { RenderOutput } from './render.js';

/** Render contexts a worker keeps; the pool sends a snapshot only for one its worker does not hold. */
export const CONTEXTS_PER_WORKER = 8;

export interface RenderRequest {
  id: number;
  content: string;
  key: string;
  snapshot?: RenderContextSnapshot;
  translateEmoticons: boolean;
  /** RenderContext.topicLinkTargets as entries. */
  topicLinkTargets?: [string, number][];
}

export type RenderReply =
  | { ready: true }
  | { id: number; output: RenderOutput }
  | { id: number; error: 'unrenderable' | 'missing-context' };
