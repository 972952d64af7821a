import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.js';
import { verifyChain, type VerifyReport } from '../eventstore/verify.js';

export interface VerifyJob {
  id: string;
  /** the signed-in user who started it */
  startedBy: number;
  startedAt: Date;
  /** the head position when it started: the progress bar's end */
  total: number;
  checked: number;
  expectedHead?: string;
  finishedAt?: Date;
  report?: VerifyReport;
  /** set when the walk itself failed (a lost database connection), not the chain */
  failure?: string;
}

/**
 * Runs `verify` in the background of this server process. A request for the same walk (the same
 * kept head, or none) while one runs joins it instead of starting a second one. Jobs live in
 * memory; the last finished one is what "last verified" shows, so it starts empty after a restart.
 */
export class VerifyJobs {
  private readonly jobs = new Map<string, VerifyJob>();
  private running: VerifyJob | undefined;
  private lastFinished: VerifyJob | undefined;

  constructor(private readonly db: Db) {}

  start(startedBy: number, total: number, expectedHead?: string): VerifyJob {
    if (this.running && this.running.expectedHead === expectedHead) return this.running;
    const job: VerifyJob = { id: randomUUID(), startedBy, startedAt: new Date(), total, checked: 0, expectedHead };
    this.jobs.set(job.id, job);
    // Keep the last few jobs only: their pages may still be open.
    for (const old of this.jobs.keys()) if (this.jobs.size > 20 && old !== job.id) this.jobs.delete(old);
    this.running = job;
    void verifyChain(this.db, { expectedHead, onProgress: (checked) => (job.checked = checked) })
      .then((report) => {
        job.report = report;
        job.checked = report.checked;
      })
      .catch((error: unknown) => {
        job.failure = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        job.finishedAt = new Date();
        if (this.running === job) this.running = undefined;
        if (!job.failure) this.lastFinished = job;
      });
    return job;
  }

  get(id: string): VerifyJob | undefined {
    return this.jobs.get(id);
  }

  last(): VerifyJob | undefined {
    return this.lastFinished;
  }

  /** Resolves when no walk runs (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
