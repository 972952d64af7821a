import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/database.js';
import { forgettingStats } from '../services/forgetting.js';

/** What the shredding and retention job did (this process) and what is still waiting (all processes). */
export function registerForgettingMetrics(registry: Registry, db: Db): void {
  const registers = [registry];
  const reported = new Map<string, number>();
  new Counter({
    name: 'forgetting_messages_shredded_total',
    help: 'Messages whose data key this process destroyed, by reason (deleted, purge, retention, erasure)',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      for (const [reason, n] of forgettingStats.shredded) {
        const before = reported.get(reason) ?? 0;
        if (n > before) this.inc({ reason }, n - before);
        reported.set(reason, n);
      }
    },
  });
  new Gauge({
    name: 'forgetting_pending_shreds',
    help: 'Deleted messages still readable in the log, waiting for their grace period to end (all processes)',
    registers,
    async collect() {
      const row = await db.selectFrom('pending_shreds').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst().catch(() => undefined);
      if (row) this.set(Number(row.n));
    },
  });
  new Gauge({
    name: 'forgetting_job_runs',
    help: 'Passes of the retention and shredding job this process ran (it runs on one replica at a time)',
    registers,
    collect() {
      this.set(forgettingStats.retentionRuns);
    },
  });
  new Gauge({
    name: 'forgetting_job_last_run_timestamp_seconds',
    help: 'When this process last ran the retention and shredding job (0: never)',
    registers,
    collect() {
      this.set(forgettingStats.lastRetentionRunSeconds);
    },
  });
  new Gauge({
    name: 'forgetting_job_last_run_duration_seconds',
    help: 'How long the last pass of the retention and shredding job took in this process',
    registers,
    collect() {
      this.set(forgettingStats.lastRetentionDurationSeconds);
    },
  });
}
