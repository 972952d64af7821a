/**
 * The timer of a job that runs in passes: the first pass after `firstDelayMs`, each next one `intervalMs` after
 * the previous pass ended (never two at once, however long a pass takes). Timers are unref'd: a pending pass
 * never keeps the process alive.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(private readonly pass: () => Promise<unknown>) {}

  /** Whether passes are scheduled (between start and stop). */
  get active(): boolean {
    return !this.stopped;
  }

  start(firstDelayMs: number, intervalMs: number): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(firstDelayMs, intervalMs);
  }

  /** Stops passing and waits for a pass in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number, intervalMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      // A pass reports its own errors; one that escapes must not stop the next.
      const pass = this.pass().catch(() => undefined);
      this.running = pass;
      void pass.finally(() => {
        if (this.running === pass) this.running = undefined;
        this.schedule(intervalMs, intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }
}
