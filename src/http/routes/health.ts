import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppServices } from '../services.js';
import { lagBehind } from '../../observability/lag.js';

export interface HealthOptions {
  services: AppServices;
  /** The database must answer SELECT 1 within this time. */
  databaseTimeoutMs?: number;
  /** Ready only while this process's read tables are at most this many events behind the log... */
  maxLagEvents?: number;
  /** ...and the oldest event they have not folded is at most this old. */
  maxLagSeconds?: number;
}

const DEFAULTS = { databaseTimeoutMs: 2_000, maxLagEvents: 10_000, maxLagSeconds: 30 };

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * GET /health/live: the process is up and its event loop turns (restart it if not).
 * GET /health/ready: send it traffic — the database answers and this process's read tables are
 * close to the head of the log (a node that lags would break read-your-writes timing).
 */
export default async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  const { ctx } = options.services;
  const bounds = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => typeof v === 'number')) } as typeof DEFAULTS;

  app.route({
    method: 'GET',
    url: '/health/live',
    config: { auth: 'none', limited: false },
    handler: async () => ({ status: 'live' }),
  });

  app.route({
    method: 'GET',
    url: '/health/ready',
    config: { auth: 'none', limited: false },
    handler: async (_request, reply) => {
      const problems: string[] = [];
      let database = 'ok';
      let lag: { head: number; events: number; seconds: number } | undefined;
      try {
        await within(sql`SELECT 1`.execute(ctx.db), bounds.databaseTimeoutMs);
        lag = await within(lagBehind(ctx.db, ctx.projectedPosition()), bounds.databaseTimeoutMs);
      } catch (error) {
        database = 'unavailable';
        problems.push(`database: ${(error as Error).message}`);
      }
      if (lag && lag.events > bounds.maxLagEvents) problems.push(`projections are ${lag.events} events behind (bound ${bounds.maxLagEvents})`);
      if (lag && lag.seconds > bounds.maxLagSeconds) problems.push(`projections are ${lag.seconds.toFixed(1)} s behind (bound ${bounds.maxLagSeconds} s)`);
      const checks = {
        database,
        projected_position: ctx.projectedPosition(),
        head_position: lag?.head ?? null,
        projection_lag_events: lag?.events ?? null,
        projection_lag_seconds: lag ? Math.round(lag.seconds * 1000) / 1000 : null,
      };
      if (problems.length === 0) return { status: 'ready', checks };
      return reply.code(503).send({ result: 'error', code: 'NOT_READY', msg: `Not ready: ${problems.join('; ')}`, status: 'not ready', checks });
    },
  });
}
