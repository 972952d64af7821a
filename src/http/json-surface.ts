import type { FastifyInstance } from 'fastify';
import type { AppServices } from './services.js';
import eventRoutes from './routes/events.js';
import messageRoutes from './routes/messages.js';
import channelRoutes from './routes/channels.js';

/**
 * The areas with routes that admit spectators (RouteSpec.spectator): the real server's
 * allow_anonymous_user_web views GET /messages, GET /messages/{id}, GET /users/me/{id}/topics and
 * POST /register. Registered again under /json, where defineRoute keeps only those routes.
 */
const SPECTATOR_AREAS = [eventRoutes, messageRoutes, channelRoutes];

/**
 * The web app's /json surface. On the real server every API path is also served under /json,
 * authenticated by a session; a request without one is a spectator's, which only the views with
 * allow_anonymous_user_web answer (zerver/lib/rest.py). This server has no sessions: here a
 * spectator route answers as its RouteSpec.spectator says, and any other API path answers as the
 * real server does without a session (the error plugin's unroutedError): 401 asking for one, after
 * its OPTIONS, its 405 (a method the path lacks) or its 404 (no such path). Basic credentials are
 * never read under /json, as on the real server.
 */
export async function jsonSurface(json: FastifyInstance, opts: { services: AppServices }): Promise<void> {
  for (const routes of SPECTATOR_AREAS) await json.register(routes, { services: opts.services });
}
