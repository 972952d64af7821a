import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';
import { MethodTable, overrideMethod, type MethodTarget, type PathMethods } from '../method-table.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every defineRoute path and its methods: what a POST with a `method` field dispatches to. */
    methodTable: MethodTable;
  }
  interface FastifyRequest {
    /** The route a POST's `method` field dispatched this request to (null: the matched route itself). */
    dispatchTarget: MethodTarget | null;
    /** The body's `method` field chose the method: it is no parameter of the route it chose. */
    methodOverridden: boolean;
  }
  interface FastifyContextConfig {
    /** The methods of the route's path (defineRoute routes and their carriers). */
    methods?: PathMethods;
    /** A POST route that only carries `method` overrides for a path that has no POST of its own. */
    overrideCarrier?: boolean;
  }
}

/**
 * The real server's rest_dispatch takes a POST whose form body has a `method` field as a request
 * of that method (zerver/lib/rest.py, for clients that cannot send PATCH or DELETE): the target's
 * handler, authentication and rate limit apply, and a method the path lacks is a 405. The body is
 * parsed by then, so the target is chosen here (preValidation), before the rate limiter (preHandler)
 * and the handler.
 */
async function methodOverridePlugin(app: FastifyInstance): Promise<void> {
  app.decorate('methodTable', new MethodTable());
  app.decorateRequest('dispatchTarget', null);
  app.decorateRequest('methodOverridden', false);
  app.addHook('preValidation', async (request) => {
    const config = request.routeOptions.config;
    const methods = config?.methods;
    if (!methods) return;
    const wanted = overrideMethod(request);
    if (wanted === undefined) {
      // A POST to a path without one: the 405 comes before the rate limit, as the real server's comes before all else.
      if (config.overrideCarrier) throw errors.methodNotAllowed(methods.allowed());
      return;
    }
    const target = methods.target(wanted);
    if (!target) throw errors.methodNotAllowed(methods.allowed());
    request.dispatchTarget = target;
    request.methodOverridden = true;
    // The carrying route may have let the request in without credentials; the target may not.
    if (target.auth === 'user' && !request.user) await app.authenticate(request);
  });
}

/**
 * For each path without a POST of its own, a POST route that runs what the body's `method` field
 * names, and answers 405 without one. Registered after every API route, so each path's methods are known.
 * Its files are those of the path's method that takes files (the web app's bot avatar upload is a
 * PATCH sent as a POST): parts stream in before the `method` field may have been read.
 */
export function registerOverrideCarriers(app: FastifyInstance): void {
  for (const methods of app.methodTable.paths.values()) {
    if (methods.targets.has('POST')) continue;
    const targets = [...methods.targets.values()];
    app.route({
      method: 'POST',
      url: methods.url,
      config: {
        // Credentials are checked when presented; without them the answer is the target's 401, or the path's 405.
        auth: targets.every((target) => target.auth === 'user') ? 'optional' : 'none',
        limited: true,
        files: targets.find((target) => target.files)?.files,
        methods,
        overrideCarrier: true,
      },
      handler: async (request, reply) => {
        // The preValidation hook has chosen the target, or answered 405 already.
        if (!request.dispatchTarget) throw errors.methodNotAllowed(methods.allowed());
        return request.dispatchTarget.run(request, reply);
      },
    });
  }
}

export default fp(methodOverridePlugin, { name: 'method-override', dependencies: ['auth'] });
