import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, errors } from '../../domain/errors.js';
import { withHead } from '../method-table.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What a request no route takes gets: 405 with the path's methods, or 404. */
    unroutedError(request: FastifyRequest): ApiError;
  }
}

/**
 * Errors the multipart parser raises on a malformed body (no boundary, a truncated part, a bad
 * boundary): plain Errors without a status, known by being made inside the parser.
 */
const MULTIPART_PARSER = /[\\/]@fastify[\\/]busboy[\\/]/;

const DB_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', '57P01', '57P02', '57P03', '08006', '08001', '08003', '08004']);
/**
 * SQLSTATEs after which the same request may well succeed in a moment: class 53 (the database is out
 * of a resource, "sorry, too many clients already" above all), a serialization failure, a deadlock
 * (PostgreSQL rolled back one side). Each is still logged as a failed request.
 */
const DB_TRANSIENT = /^(53[0-9A-Z]{3}|40001|40P01)$/;

/** Maps anything thrown to a Zulip error envelope; internals of a 5xx are logged, never shown. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { code?: string; statusCode?: number };
  if (e.code && (DB_UNAVAILABLE.has(e.code) || DB_TRANSIENT.test(e.code))) return errors.serviceUnavailable();
  if (!e.statusCode && typeof e.stack === 'string' && MULTIPART_PARSER.test(e.stack)) {
    return errors.badRequest(`Malformed multipart body: ${e.message}`);
  }
  // A value the database cannot hold (an id past int4, text where a number belongs) is bad input.
  if (e.code === '22003' || e.code === '22P02' || /out of range for type|invalid input syntax for type/.test(String(e.message))) {
    return errors.badRequest('Invalid parameter: value out of range');
  }
  // SQLSTATE class 22 (data exception): a request value the database cannot hold, such as an id
  // beyond the integer range or a NUL byte in text. The input is at fault, not the server.
  if (typeof e.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code)) return errors.badRequest('Invalid parameter value');
  if (typeof e.message === 'string' && /Connection terminated|timeout exceeded when trying to connect/i.test(e.message)) {
    return errors.serviceUnavailable();
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    switch (e.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
      case 'FST_REQ_FILE_TOO_LARGE':
        return new ApiError('BAD_REQUEST', 413, 'Request body is too large');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return new ApiError('BAD_REQUEST', 415, 'Unsupported content type');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return new ApiError('INVALID_JSON', 400, 'Malformed JSON');
      default:
        return errors.badRequest('Malformed request');
    }
  }
  return new ApiError('INTERNAL_SERVER_ERROR', 500, 'Internal server error');
}

interface ErrorPluginOptions {
  routePatterns: () => Array<{ pattern: RegExp; method: string; params: number }>;
  /**
   * The web app's surface (src/http/json-surface.ts): its paths are the API's under another prefix,
   * and only its spectator routes are registered; every other path of it answers from here.
   */
  surfaces?: { json: string; api: string };
}

async function errorPlugin(app: FastifyInstance, opts: ErrorPluginOptions) {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    // Refused before the body was read to its end (an upload over the limit): close the connection
    // after answering rather than read the rest of the body only to drop it.
    if (request.raw.complete === false) reply.header('Connection', 'close');
    void reply
      .status(apiError.status)
      .headers(apiError.headers)
      .send({ result: 'error', msg: apiError.message, code: apiError.code, ...apiError.extra });
  });
  /** The methods the path has, as the real server's URL table would find its one pattern. */
  const methodsOfPath = (path: string): string[] => {
    const matches = opts.routePatterns().filter((r) => r.pattern.test(path));
    // The router takes `/users/me` before `/users/:user`: the path's methods are the most specific pattern's.
    const fewest = Math.min(...matches.map((r) => r.params));
    return withHead(matches.filter((r) => r.params === fewest).map((r) => r.method));
  };
  const pathOf = (request: FastifyRequest) => request.url.split('?')[0]!;
  const onJson = (path: string) => opts.surfaces !== undefined && (path === opts.surfaces.json || path.startsWith(`${opts.surfaces.json}/`));
  /** A /json path's methods are those of the same API path. */
  const pathMethods = (request: FastifyRequest): string[] => {
    const path = pathOf(request);
    return methodsOfPath(onJson(path) ? opts.surfaces!.api + path.slice(opts.surfaces!.json.length) : path);
  };
  /**
   * A request no route takes: a 405 when its path has other methods (json_method_not_allowed), else a
   * 404. On /json, a method the path has is one this server cannot answer there: /json authenticates
   * by session, and without one (there are none here) the real server asks for one.
   */
  const unroutedError = (request: FastifyRequest): ApiError => {
    const allowed = pathMethods(request);
    if (allowed.length === 0) return errors.notFound();
    if (onJson(pathOf(request)) && allowed.includes(request.method)) return errors.notLoggedInSession();
    return errors.methodNotAllowed(allowed);
  };
  app.decorate('unroutedError', unroutedError);
  app.setNotFoundHandler(async (request, reply) => {
    // As the real server's rest_dispatch: OPTIONS lists the path's methods (sorted, no body, before any authentication).
    const allowed = pathMethods(request);
    if (request.method === 'OPTIONS' && allowed.length > 0) return reply.status(204).header('Allow', [...allowed].sort().join(', ')).send();
    throw unroutedError(request);
  });
}

export default fp(errorPlugin, { name: 'errors' });
