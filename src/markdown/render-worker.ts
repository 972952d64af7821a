// A render worker thread (see render-pool.ts): renders one message at a time; the pool terminates it when a
// render runs past its time limit.
import { parentPort } from 'node:worker_threads';
import { contextFromSnapshot } from './context-snapshot.js';
import { renderMarkdown, renderParsed } from './render.js';
import { RecentKeys } from './recent-keys.js';
import type { RenderContext } from './types.js';
import { CONTEXTS_PER_WORKER, type RenderReply, type RenderRequest } from './render-protocol.js';

const port = parentPort;
if (!port) throw new Error('render-worker.ts runs as a worker thread');
const contexts = new RecentKeys<RenderContext>(CONTEXTS_PER_WORKER);

port.on('message', (request: RenderRequest) => {
  let ctx = contexts.get(request.key);
  if (!ctx && request.snapshot) contexts.set(request.key, (ctx = contextFromSnapshot(request.snapshot)));
  let reply: RenderReply;
  if (!ctx) {
    reply = { id: request.id, error: 'missing-context' };
  } else {
    try {
      // The pool is sent only what renderIfPlain could not take (render-pool.ts's renderOffLoop).
      const targets = request.topicLinkTargets ? { topicLinkTargets: new Map(request.topicLinkTargets) } : {};
      const output = renderParsed(request.content, { ...ctx, translateEmoticons: request.translateEmoticons, ...targets });
      reply = { id: request.id, output };
    } catch {
      // renderMarkdown throws nothing but MarkdownRenderingError.
      reply = { id: request.id, error: 'unrenderable' };
    }
  }
  port.postMessage(reply);
});
// A fresh worker's first render runs cold code (a few hundred ms): warm it before taking messages, so that
// the time limit applies to the message and not to the worker's start.
const warmUp = ['# Title', '**bold** *em* ~~del~~ `code` [link](http://a.b/) http://c.d/ :smile: @**Name** #**channel**',
  '> quote\n\n- item\n  - nested\n1. one', '| a | b |\n| - | - |\n| 1 | 2 |', '```quote\nq\n```\n```spoiler s\nx\n```\n```python\nx = 1\n```',
  '$$x^2$$ <time:2024-05-01T15:00:00+02:00>'].join('\n\n');
renderMarkdown(warmUp, contextFromSnapshot({ key: '', realmUrl: 'http://localhost', users: [], groups: [], channels: [], linkifiers: [], customEmoji: [] }));
port.postMessage({ ready: true } satisfies RenderReply);
