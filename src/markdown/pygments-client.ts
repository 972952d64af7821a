// The Pygments helper process (pygments-helper.py): one per server process, started at the first code block
// that needs it, spoken to with one JSON line per request and per answer. Answers come back in request order,
// but each carries its request's id, so any number of requests may be in flight.
//
// Highlighting is an embellishment: when the helper is off, cannot start, dies or is slow, a request resolves
// to undefined and the caller keeps the block unhighlighted. Nothing here blocks the event loop or throws.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { shippedPath } from '../source-root.js';

export interface HighlightRequest {
  /** A Pygments lexer alias. */
  lang: string;
  code: string;
  /** 1-based lines to mark, from a code block's header line. */
  hlLines?: number[];
}

export interface PygmentsClientOptions {
  /** The Python interpreter, or 'off'. */
  python: string;
  /**
   * How long the running helper may go without answering while requests wait; past it the helper is
   * taken as stuck and killed. Counted from its last answer, not from each request: a burst of
   * blocks queued behind one another is progress, a helper that stops answering is not.
   */
  answerTimeoutMs?: number;
  /** How long the helper may take to import Pygments and say it is ready. */
  startTimeoutMs?: number;
  /** The first wait before starting again after a failure; it doubles with each failure in a row. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** Where failures are reported, once per kind of failure. */
  log?: (message: string) => void;
  script?: string;
}

interface Pending {
  resolve(html: string | undefined): void;
}

interface Helper {
  child: ChildProcessWithoutNullStreams;
  ready: boolean;
  pending: Map<number, Pending>;
  startTimer?: NodeJS.Timeout;
  /** Armed while requests wait on a ready helper; reset by each answer. */
  progressTimer?: NodeJS.Timeout;
}

export class PygmentsClient {
  private helper: Helper | undefined;
  private nextId = 1;
  private failuresInRow = 0;
  private notBefore = 0;
  private readonly logged = new Set<string>();
  private readonly options: Required<PygmentsClientOptions>;

  constructor(options: PygmentsClientOptions) {
    this.options = {
      // Generous on purpose: the first block in a language makes the helper load and compile that lexer
      // (100+ ms idle, several times that on a loaded machine), and a bound that fires then leaves a
      // healthy helper's blocks plain. The real server bounds a whole render at 5 s.
      answerTimeoutMs: 5_000,
      startTimeoutMs: 15_000,
      restartDelayMs: 1_000,
      maxRestartDelayMs: 60_000,
      log: (message) => console.warn(message),
      script: shippedPath('src/markdown/pygments-helper.py'),
      ...options,
    };
  }

  get enabled(): boolean {
    return this.options.python !== 'off';
  }

  /** The helper's HtmlFormatter output for `request`, or undefined when it cannot be had in time. */
  highlight(request: HighlightRequest): Promise<string | undefined> {
    const helper = this.running();
    if (!helper) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const pending: Pending = { resolve };
      helper.pending.set(id, pending);
      this.expectProgress(helper);
      this.refWhileBusy(helper);
      const line = JSON.stringify({ id, lang: request.lang, code: request.code, hl_lines: request.hlLines ?? [] });
      helper.child.stdin.write(`${line}\n`);
    });
  }

  /** Stops the helper (for tests and shutdown); later requests start a new one. */
  close(): void {
    if (this.helper) this.fail(this.helper, undefined);
  }

  private running(): Helper | undefined {
    if (!this.enabled) return undefined;
    if (this.helper) return this.helper;
    if (Date.now() < this.notBefore) return undefined;
    return (this.helper = this.start());
  }

  private start(): Helper {
    const child = spawn(this.options.python, [this.options.script], { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const helper: Helper = { child, ready: false, pending: new Map() };
    child.stdin.on('error', () => {}); // a dead helper's stdin: 'exit' reports it
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 2_000) stderr += chunk;
    });
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.answered(helper, line));
    child.on('error', (error) => this.fail(helper, `could not start ${this.options.python}: ${error.message}`));
    child.on('exit', (code, signal) => {
      const why = stderr.trim().split('\n').at(-1) ?? '';
      this.fail(helper, `exited (${signal ?? `code ${code}`})${why ? `: ${why}` : ''}`);
    });
    helper.startTimer = setTimeout(() => this.fail(helper, `not ready within ${this.options.startTimeoutMs} ms`), this.options.startTimeoutMs);
    this.refWhileBusy(helper);
    return helper;
  }

  private answered(helper: Helper, line: string): void {
    let reply: { ready?: boolean; id?: number; html?: unknown };
    try {
      reply = JSON.parse(line) as typeof reply;
    } catch {
      return this.fail(helper, 'answered with a line that is not JSON');
    }
    if (reply.ready === true && !helper.ready) {
      helper.ready = true;
      clearTimeout(helper.startTimer);
      this.expectProgress(helper);
      return;
    }
    const pending = typeof reply.id === 'number' ? helper.pending.get(reply.id) : undefined;
    if (!pending) return;
    helper.pending.delete(reply.id!);
    clearTimeout(helper.progressTimer);
    helper.progressTimer = undefined;
    this.expectProgress(helper);
    this.failuresInRow = 0;
    pending.resolve(typeof reply.html === 'string' ? reply.html : undefined);
    this.refWhileBusy(helper);
  }

  private expectProgress(helper: Helper): void {
    if (!helper.ready || helper.pending.size === 0 || helper.progressTimer) return;
    helper.progressTimer = setTimeout(() => this.fail(helper, `no answer within ${this.options.answerTimeoutMs} ms`), this.options.answerTimeoutMs);
  }

  /** Ends `helper`: what it still owes falls back to plain code, and the next start waits (doubling). */
  private fail(helper: Helper, reason: string | undefined): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    clearTimeout(helper.startTimer);
    clearTimeout(helper.progressTimer);
    for (const pending of helper.pending.values()) {
      pending.resolve(undefined);
    }
    helper.pending.clear();
    helper.child.kill('SIGKILL');
    if (reason === undefined) return;
    const delay = Math.min(this.options.maxRestartDelayMs, this.options.restartDelayMs * 2 ** this.failuresInRow);
    this.failuresInRow += 1;
    this.notBefore = Date.now() + delay;
    const kind = reason.replace(/\d+/g, 'N');
    if (!this.logged.has(kind)) {
      this.logged.add(kind);
      this.options.log(`Pygments helper ${reason}; code blocks render unhighlighted meanwhile (next start in ${delay} ms at the earliest)`);
    }
  }

  // An idle helper must not keep the process alive (a test run, a CLI command); a busy one must, while a
  // message waits for it.
  private refWhileBusy(helper: Helper): void {
    const busy = helper.pending.size > 0 || !helper.ready;
    const { child } = helper;
    // The pipes are sockets: each one holds the event loop on its own.
    const handles = [child, child.stdout, child.stdin, child.stderr] as unknown as { ref(): void; unref(): void }[];
    for (const handle of handles) {
      if (busy) handle.ref();
      else handle.unref();
    }
  }
}

let shared: PygmentsClient | undefined;

/** The process's helper, configured by PYGMENTS_PYTHON (default python3; "off" disables highlighting). */
export function pygmentsClient(): PygmentsClient {
  return (shared ??= new PygmentsClient({ python: process.env.PYGMENTS_PYTHON?.trim() || 'python3' }));
}
