import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config.js';

/** How long a graceful stop may take before the workers still running are killed. */
const STOP_GRACE_MS = 25_000;
/** A worker that dies sooner than this after it started listening is restarted after a growing pause. */
const HEALTHY_AFTER_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;

const say = (line: string) => console.log(`[supervisor ${process.pid}] ${line}`);

/**
 * WEB_CONCURRENCY > 1: this process forks that many server processes sharing the port (node:cluster
 * hands each new connection to one of them) and loads nothing else. Every worker is a full server,
 * like a replica behind a load balancer: the projection runner and the NATS relay elect themselves
 * with PostgreSQL advisory locks, scheduled deliveries and queue reads go through the shared database,
 * and wake-ups travel over NATS (docs/DECISIONS.md, "Several server processes on one host").
 *
 * A worker that dies once the server has started is replaced (after a growing pause while
 * replacements keep dying young). A worker that dies before all of them first listened means the
 * server failed to start (bad configuration, database refused): it stops, as a single process would. SIGTERM/SIGINT is passed to every worker, which answers its blocked long-polls and
 * finishes its requests; the supervisor exits once they all have.
 */
export function superviseWorkers(config: Config): void {
  const alive = new Set<Worker>();
  const listeningSince = new Map<Worker, number>();
  let stopping = false;
  let announced = false;
  let restartDelay = 0;
  let exitCode = 0;

  const fork = () => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.on('listening', () => {
      listeningSince.set(worker, Date.now());
      if (!announced && listeningSince.size === config.webConcurrency) {
        announced = true;
        say(`${config.webConcurrency} server processes started`);
        console.log(`listening on ${config.externalUrl} (PostgreSQL, nats bus, ${config.webConcurrency} server processes)`);
      }
    });
  };

  const stopAll = (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    say(`${why}: stopping ${alive.size} server processes`);
    for (const worker of alive) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of alive) worker.process.kill('SIGKILL');
    }, STOP_GRACE_MS).unref();
    if (alive.size === 0) process.exit(exitCode);
  };

  cluster.on('exit', (worker, code, signal) => {
    const since = listeningSince.get(worker);
    listeningSince.delete(worker);
    alive.delete(worker);
    if (stopping) {
      if (alive.size === 0) process.exit(exitCode);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!announced) {
      stopAll(`server process ${worker.process.pid} failed to start (${how})`, 1);
      return;
    }
    restartDelay = since === undefined || Date.now() - since < HEALTHY_AFTER_MS ? Math.min(MAX_RESTART_DELAY_MS, Math.max(1_000, restartDelay * 2)) : 0;
    say(`server process ${worker.process.pid} exited (${how}); starting another${restartDelay ? ` in ${restartDelay / 1000} s` : ''}`);
    setTimeout(() => {
      if (!stopping) fork();
    }, restartDelay);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopAll(signal, 0));
  for (let i = 0; i < config.webConcurrency; i++) fork();
}
