import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppServices } from '../services.js';
import type { ProjectionRunner } from '../../projection-runner.js';
import { createServerMetrics } from '../../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    startedAt?: bigint;
  }
}

/**
 * GET /metrics (Prometheus text format) and the hook that counts every answered request. Outside
 * /api/v1 and without authentication, like any scrape target: bind the port to a private network
 * or filter /metrics at the proxy when the server faces the internet.
 */
async function metricsPlugin(app: FastifyInstance, { services }: { services: AppServices }): Promise<void> {
  const { ctx, queues } = services;
  // The platform the server runs on also carries the projection runner; a bare ServiceContext does not.
  const runner = (ctx as { projections?: ProjectionRunner }).projections;
  const metrics = createServerMetrics({
    db: ctx.db,
    store: ctx.store,
    bus: ctx.bus,
    appliedEvents: runner?.appliedEvents,
    blockedPolls: () => queues.hub.blockedCount,
  });

  app.addHook('onRequest', async (request) => {
    request.startedAt = process.hrtime.bigint();
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: ids in paths would make one series per message.
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = request.startedAt === undefined ? 0 : Number(process.hrtime.bigint() - request.startedAt) / 1e9;
    metrics.observeRequest(request.method, route, reply.statusCode, seconds);
  });

  app.route({
    method: 'GET',
    url: '/metrics',
    config: { auth: 'none', limited: false },
    handler: async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  });
}

// Not encapsulated: the hooks must see every route of the app.
export default fp(metricsPlugin, { name: 'metrics' });
