// Rendering off the main thread. Small messages (nearly all of them) render inline: their worst case stays far
// below the event loop's budget and a worker round trip would only add latency. Larger ones render in a pool of
// worker threads, one message per worker at a time; a render that runs past RENDER_TIMEOUT_MS has its worker
// terminated (and replaced) and is refused as the real server refuses a message its renderer times out on:
// 400 "Unable to render message". Meanwhile the main thread's event loop keeps answering.
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RenderContextSnapshot } from './context-snapshot.js';
import { MarkdownRenderingError } from './limits.js';
import { highlightCodeBlocks } from './code-highlight.js';
import { pygmentsClient } from './pygments-client.js';
import { renderIfPlain, renderMarkdownWithCodeBlocks, type RenderOutput } from './render.js';
import { CONTEXTS_PER_WORKER, type RenderReply, type RenderRequest } from './render-protocol.js';
import { RecentKeys } from './recent-keys.js';
import type { RenderContext, RenderResult } from './types.js';
import { shippedPath } from '../source-root.js';

/**
 * Messages shorter than this render inline. The slowest adversarial family costs about 16 µs per character on
 * an idle core (table rows), so an inline render blocks the event loop for at most ~16 ms (bench/markdown.ts).
 */
export const INLINE_MAX_CHARS = 1_000;
/** Wall time a worker may spend on one message (the real server's limit is 5 s; ours is well below). */
export const RENDER_TIMEOUT_MS = 1_000;
// Two at least, so that while a worker killed past the time limit is replaced, another one serves.
const POOL_SIZE = Math.max(2, Math.min(4, availableParallelism() - 1));
/** Renders waiting for a worker; past this a message is refused rather than queued without bound. */
const MAX_WAITING = 1_000;
/** A worker's heap: a render that needs more kills the worker, not the process. */
const WORKER_HEAP_MB = 256;

interface Task {
  content: string;
  snapshot: RenderContextSnapshot;
  translateEmoticons: boolean;
  topicLinkTargets?: [string, number][];
  resolve(output: RenderOutput): void;
  reject(error: Error): void;
  /** Set when the worker answered that it no longer holds the context. */
  sendSnapshot?: boolean;
}

interface PoolWorker {
  thread: Worker;
  ready: boolean;
  task?: Task;
  timer?: NodeJS.Timeout;
  known: RecentKeys<true>;
  failure?: Error;
}

// The worker runs the same kind of file as this one: .js once built; .ts under tsx (tests, start:dev), where a
// worker thread does not inherit tsx's loader, so it registers it before importing the worker's module.
const typeScript = extname(fileURLToPath(import.meta.url)) === '.ts';
// Named from the shipped root, not this module's URL: in the compiled server this module lives inside the bundle.
const workerUrl = pathToFileURL(shippedPath(`src/markdown/render-worker${typeScript ? '.ts' : '.js'}`));

function startWorker(): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } };
  if (!typeScript) return new Worker(workerUrl, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

class RenderPool {
  private readonly workers = new Set<PoolWorker>();
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private timeouts = 0;

  render(content: string, snapshot: RenderContextSnapshot, ctx: Pick<RenderContext, 'translateEmoticons' | 'topicLinkTargets'>): Promise<RenderOutput> {
    if (this.waiting.length >= MAX_WAITING) return Promise.reject(new MarkdownRenderingError());
    const translateEmoticons = ctx.translateEmoticons === true;
    const topicLinkTargets = ctx.topicLinkTargets ? [...ctx.topicLinkTargets] : undefined;
    return new Promise((resolve, reject) => {
      this.waiting.push({ content, snapshot, translateEmoticons, topicLinkTargets, resolve, reject });
      this.pump();
    });
  }

  /** Renders refused because they ran past the time limit, since the process started. */
  get timedOut(): number {
    return this.timeouts;
  }

  private pump(): void {
    while (this.workers.size < POOL_SIZE) this.spawn();
    for (const worker of this.workers) {
      if (this.waiting.length === 0) break;
      if (worker.ready && !worker.task) this.dispatch(worker, this.waiting.shift()!);
    }
    // A worker keeps the process alive while a caller awaits it: busy, or starting while renders wait.
    for (const worker of this.workers) {
      if (worker.task || (!worker.ready && this.waiting.length > 0)) worker.thread.ref();
      else worker.thread.unref();
    }
  }

  private spawn(): void {
    const thread = startWorker();
    const worker: PoolWorker = { thread, ready: false, known: new RecentKeys(CONTEXTS_PER_WORKER) };
    this.workers.add(worker);
    thread.on('message', (reply: RenderReply) => this.answered(worker, reply));
    thread.on('error', (error) => (worker.failure = error));
    thread.on('exit', () => this.exited(worker));
    // After the listeners: adding a 'message' listener refs the worker's port again.
    thread.unref();
  }

  private dispatch(worker: PoolWorker, task: Task): void {
    const { snapshot } = task;
    const request: RenderRequest = { id: this.nextId++, content: task.content, key: snapshot.key, translateEmoticons: task.translateEmoticons, topicLinkTargets: task.topicLinkTargets };
    if (task.sendSnapshot || !worker.known.get(snapshot.key)) request.snapshot = snapshot;
    worker.known.set(snapshot.key, true);
    worker.task = task;
    worker.timer = setTimeout(() => {
      this.timeouts += 1;
      void worker.thread.terminate();
    }, RENDER_TIMEOUT_MS);
    worker.thread.postMessage(request);
  }

  private answered(worker: PoolWorker, reply: RenderReply): void {
    if ('ready' in reply) {
      worker.ready = true;
      this.pump();
      return;
    }
    const task = worker.task;
    this.release(worker);
    if (!task) return void this.pump();
    if ('output' in reply) task.resolve(reply.output);
    else if (reply.error === 'missing-context') this.waiting.unshift({ ...task, sendSnapshot: true });
    else task.reject(new MarkdownRenderingError());
    this.pump();
  }

  private release(worker: PoolWorker): void {
    clearTimeout(worker.timer);
    worker.task = undefined;
  }

  private exited(worker: PoolWorker): void {
    const task = worker.task;
    this.release(worker);
    this.workers.delete(worker);
    // Terminated past the time limit, out of memory or crashed: that message cannot be rendered.
    task?.reject(new MarkdownRenderingError());
    if (!worker.ready) {
      // A worker that cannot even start would be replaced forever: refuse what waits and start again later.
      for (const waiting of this.waiting.splice(0)) waiting.reject(new Error('Markdown render worker failed to start', { cause: worker.failure }));
      return;
    }
    this.pump();
  }
}

let pool: RenderPool | undefined;

/**
 * Renders as renderMarkdown does, in a worker thread under a time limit when the message is large, then
 * highlights its code blocks with Pygments where the helper process answers in time.
 */
export async function renderMarkdownAsync(content: string, ctx: RenderContext): Promise<RenderResult> {
  const { result, codeBlocks } = await renderOffLoop(content, ctx);
  if (codeBlocks.length === 0) return result;
  return { ...result, html: await highlightCodeBlocks(result.html, codeBlocks, pygmentsClient()) };
}

function renderOffLoop(content: string, ctx: RenderContext): RenderOutput | Promise<RenderOutput> {
  // A context without a snapshot (built by hand, in tests) cannot cross to a worker.
  if (content.length < INLINE_MAX_CHARS || !ctx.snapshot) return renderMarkdownWithCodeBlocks(content, ctx);
  // Plain text of any length renders in linear time without parsing, far faster than a worker round trip.
  const plain = renderIfPlain(content, ctx);
  if (plain) return plain;
  // The pool starts with the first large message, not at boot: spawning and warming workers while a
  // server starts took CPU from its first requests.
  pool ??= new RenderPool();
  return pool.render(content, ctx.snapshot, ctx);
}

/** Large renders refused for running past RENDER_TIMEOUT_MS (for /metrics). */
export const renderTimeouts = (): number => pool?.timedOut ?? 0;
