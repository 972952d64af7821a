import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';

/** A per-user request budget (per client address before authentication), as the real server's. */
async function rateLimitPlugin(app: FastifyInstance, opts: { perMinute: number }): Promise<void> {
  if (opts.perMinute <= 0) return;
  await app.register(rateLimit, {
    global: true,
    max: opts.perMinute,
    timeWindow: 60_000,
    hook: 'preHandler',
    keyGenerator: (request) => (request.user ? `user:${request.user.id}` : `ip:${request.ip}`),
    // A POST dispatched by its `method` field counts as the route it was dispatched to.
    allowList: (request) => (request.dispatchTarget?.limited ?? request.routeOptions.config?.limited) === false,
    errorResponseBuilder: (_request, context) => {
      const error = errors.rateLimited(Math.max(context.ttl / 1000, 0.001));
      return Object.assign(error, { statusCode: 429 });
    },
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
