import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Bus } from '../bus/bus.js';
import { projectionLags } from './lag.js';
import { registerForgettingMetrics } from './forgetting-metrics.js';

export interface MetricsSources {
  db: Db;
  store: EventStore;
  bus: Bus;
  /** Events each projection folded in this process (absent when the context has no runner). */
  appliedEvents?: ReadonlyMap<string, number>;
  /** GET /events calls of this process waiting for an event. */
  blockedPolls(): number;
}

export interface ServerMetrics {
  registry: Registry;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
}

/**
 * One registry per server instance (tests run several in one process). Counters move as things
 * happen; everything that lives in the database (lag, open queues) is sampled on each scrape, so
 * every node reports the same figures for shared state.
 */
export function createServerMetrics(sources: MetricsSources): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request (long-polls included), by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });

  const appended = new Counter({
    name: 'eventlog_events_appended_total',
    help: 'Events appended to the log by this process (rate() of it is the append rate)',
    registers,
  });
  sources.store.onCommit((_head, count) => appended.inc(count));

  const signer = sources.store.signer;
  if (signer) {
    let reportedFailures = 0;
    new Counter({
      name: 'eventlog_signing_failures_total',
      help: 'Failed attempts of this process to store log signatures (each retried with the next batch)',
      registers,
      collect() {
        if (signer.failures > reportedFailures) this.inc(signer.failures - reportedFailures);
        reportedFailures = signer.failures;
      },
    });
    new Gauge({
      name: 'eventlog_unsigned_ranges',
      help: 'Ranges this process committed and has not signed yet',
      registers,
      collect() {
        this.set(signer.unsignedRanges);
      },
    });
  }

  new Gauge({
    name: 'eventlog_head_position',
    help: 'Global position of the newest event in the log (all processes)',
    registers,
    async collect() {
      const head = await sources.store.head().catch(() => undefined);
      if (head) this.set(head.position);
    },
  });

  const reportedApplied = new Map<string, number>();
  new Counter({
    name: 'projection_events_applied_total',
    help: 'Events folded by each projection in this process',
    labelNames: ['projection'] as const,
    registers,
    collect() {
      // A counter cannot be set: add what was folded since the last scrape.
      for (const [projection, n] of sources.appliedEvents ?? []) {
        const reported = reportedApplied.get(projection) ?? 0;
        if (n > reported) this.inc({ projection }, n - reported);
        reportedApplied.set(projection, n);
      }
    },
  });

  // prom-client collects all metrics of a scrape concurrently: the three projection gauges share one query.
  let lagSample: { at: number; promise: Promise<Awaited<ReturnType<typeof projectionLags>> | undefined> } | undefined;
  const sampleLags = () => {
    if (!lagSample || Date.now() - lagSample.at > 250) {
      lagSample = { at: Date.now(), promise: projectionLags(sources.db).catch(() => undefined) };
    }
    return lagSample.promise;
  };
  const projectionGauge = (name: string, help: string, pick: (lag: { position: number; events: number; seconds: number }) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['projection'] as const,
      registers,
      async collect() {
        const sample = await sampleLags();
        for (const lag of sample?.lags ?? []) this.set({ projection: lag.projection }, pick(lag));
      },
    });
  projectionGauge('projection_position', 'Log position each projection has folded (its checkpoint)', (lag) => lag.position);
  projectionGauge('projection_lag_events', 'Events in the log that each projection has not folded yet', (lag) => lag.events);
  projectionGauge('projection_lag_seconds', 'Age of the oldest event each projection has not folded yet (0 when caught up)', (lag) => lag.seconds);

  new Gauge({
    name: 'event_queues_open',
    help: 'Event queues registered and not yet expired or deleted (all processes)',
    registers,
    async collect() {
      const row = await sources.db
        .selectFrom('event_queues')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirst()
        .catch(() => undefined);
      if (row) this.set(Number(row.n));
    },
  });

  new Gauge({
    name: 'event_queue_longpolls_blocked',
    help: 'GET /events calls of this process waiting for an event',
    registers,
    collect() {
      this.set(sources.blockedPolls());
    },
  });

  new Gauge({
    name: 'nats_connected',
    help: '1 when the NATS connection is up (always 1 with the in-process bus)',
    labelNames: ['bus'] as const,
    registers,
    collect() {
      this.set({ bus: sources.bus.kind }, sources.bus.isConnected() ? 1 : 0);
    },
  });

  registerForgettingMetrics(registry, sources.db);

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
}
