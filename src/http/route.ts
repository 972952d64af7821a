import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { errors } from '../domain/errors.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import type { RequestMeta } from '../services/context.js';
import { clientName } from './client-name.js';
import type { FileUploadSpec } from './file-uploads.js';
import { compileParams, parseParams, type CompiledParams, type ParamsSpec } from './params.js';
import type { MethodTarget, PathMethods } from './method-table.js';
import { spectatorViewer, type Viewer } from '../visibility.js';

/**
 * The web app's surface. The real server serves every API path under /json too, authenticated by
 * a session cookie and never by Basic credentials; this server has no sessions, so a /json request
 * is always a spectator's, and only routes that admit spectators exist there (src/http/json-surface.ts).
 */
export const JSON_PREFIX = '/json';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface RouteContext<P> {
  params: P;
  request: FastifyRequest;
  reply: FastifyReply;
  /** The authenticated user (routes with auth: 'none' never read it). */
  user: UserRow;
  realm: RealmRow;
  meta: RequestMeta;
  /** Parameters the route does not know (for a handler that writes its reply itself). */
  ignored: readonly string[];
}

/** What a route's spectator handler gets: no user, and the organization whose web-public channels are read. */
export interface SpectatorContext<P> {
  params: P;
  request: FastifyRequest;
  reply: FastifyReply;
  realm: RealmRow;
  /** The spectator as a viewer (src/visibility.ts): every read it is passed to applies a spectator's rules. */
  viewer: Viewer;
  ignored: readonly string[];
}

export interface RouteSpec<P> {
  method: Method | Method[];
  url: string;
  /** 'user' (default): HTTP Basic required; 'none': public. */
  auth?: 'user' | 'none';
  /** Path parameters are declared here too; they are validated with the rest. */
  params?: ParamsSpec;
  /** Skips the rate limiter (long-polls). */
  rateLimit?: boolean;
  /** The route takes files: how large, and where they stream to (src/http/file-uploads.ts). */
  files?: FileUploadSpec;
  /** Who may call the route: throws the refusal. Checked before the parameters, as the real server's role checks are. */
  allow?(user: UserRow): void;
  handler(ctx: RouteContext<P>): Promise<Record<string, unknown> | void>;
  /**
   * Spectators may call the route too (the real server's allow_anonymous_user_web view flag): under
   * /json only, as on the real server (/api/v1 without credentials stays a 401), once the server and the
   * organization admit spectators (admitSpectator, after the parameters are checked). This handler
   * answers them; a route without it has no spectator answer at all.
   */
  spectator?(ctx: SpectatorContext<P>): Promise<Record<string, unknown> | void>;
}

function fieldsOf(request: FastifyRequest): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const take = (source: unknown) => {
    if (!source || typeof source !== 'object' || Buffer.isBuffer(source)) return;
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      if (value && typeof value === 'object' && !Array.isArray(value) && 'type' in value) {
        // @fastify/multipart part: fields become strings; files are read by the upload route.
        const part = value as { type: string; value?: unknown };
        if (part.type === 'field') fields[name] = part.value;
        continue;
      }
      fields[name] = value;
    }
  };
  take(request.query);
  take(request.body);
  // The field that chose the method is the dispatcher's, not a parameter of the route it chose.
  if (request.methodOverridden) delete fields.method;
  // So is the client's name (requestMeta).
  delete fields.client;
  return fields;
}

/**
 * The path's values under the route's own names. A request dispatched by its `method` field may
 * have matched a route of the same shape that names them differently (`:user` and `:user_id`): then
 * by position, which is the order the router reads them in.
 */
function pathValuesOf(request: FastifyRequest, names: readonly string[]): Record<string, string | undefined> {
  const params = (request.params ?? {}) as Record<string, string>;
  if (names.every((name) => name in params)) return params;
  const values = Object.values(params);
  return Object.fromEntries(names.map((name, i) => [name, values[i]]));
}

/** Registers a route: parameters from query and body, validated, then the handler's success envelope. */
export function defineRoute<P = Record<string, unknown>>(app: FastifyInstance, spec: RouteSpec<P>): void {
  // Compiled on the route's first request: compiling the ~400 routes' validators up front was the
  // largest part of start-up, and most routes of a given server are never called soon after it.
  let compiled: CompiledParams | undefined;
  const pathNames = [...spec.url.matchAll(/:([a-zA-Z_]+)/g)].map((m) => m[1]!);
  // The real server's URL patterns take digits only for an integer in the path: anything else is no route.
  const digitNames = pathNames.filter((name) => (spec.params?.properties?.[name] as { type?: unknown } | undefined)?.type === 'integer');
  const limited = spec.rateLimit !== false;
  const onJson = app.prefix === JSON_PREFIX || app.prefix.startsWith(`${JSON_PREFIX}/`);
  if (onJson) {
    // Only routes that admit spectators exist under /json; every other path answers there as src/http/json-surface.ts says.
    const spectator = spec.spectator;
    if (!spectator) return;
    app.route({
      method: spec.method,
      url: spec.url,
      config: { auth: 'spectator', limited, params: spec.params },
      handler: (request, reply) => runForSpectator(request, reply, spectator),
    });
    return;
  }
  const auth = spec.auth ?? 'user';
  const target: MethodTarget = { auth, limited, files: spec.files, run };
  // One table per app (src/http/plugins/method-override.ts): a POST's `method` field dispatches through it.
  let methods: PathMethods | undefined;
  if (app.hasDecorator('methodTable')) {
    for (const method of [spec.method].flat()) methods = app.methodTable.add(app.prefix + spec.url, method, target);
  }
  app.route({
    method: spec.method,
    url: spec.url,
    config: { auth, limited, params: spec.params, files: spec.files, methods, spectators: spec.spectator !== undefined },
    handler: (request, reply) => (request.dispatchTarget ?? target).run(request, reply),
  });

  /** The path's values; before anything else, the path's 405 or 404 if it is not this route after all. */
  function pathOf(request: FastifyRequest): Record<string, string | undefined> {
    const pathValues = pathValuesOf(request, pathNames);
    // `/messages/render` is no `/messages/{message_id}`.
    for (const name of digitNames) if (!/^[0-9]+$/.test(pathValues[name] ?? '')) throw request.server.unroutedError(request);
    return pathValues;
  }

  /** The route's parameters from the request, validated (path values under the route's own names). */
  function parse(request: FastifyRequest, pathValues: Record<string, string | undefined>): { params: P; ignored: string[] } {
    const fields = fieldsOf(request);
    for (const name of pathNames) fields[name] = pathValues[name];
    compiled ??= compileParams(spec.params ?? { properties: {} });
    return parseParams<P>(compiled, fields);
  }

  function envelope(reply: FastifyReply, result: Record<string, unknown> | void, ignored: readonly string[]): unknown {
    if (reply.sent) return reply;
    const body: Record<string, unknown> = { result: 'success', msg: '', ...(result ?? {}) };
    if (ignored.length > 0) body.ignored_parameters_unsupported = ignored;
    return body;
  }

  async function runForSpectator(request: FastifyRequest, reply: FastifyReply, spectator: NonNullable<RouteSpec<P>['spectator']>): Promise<unknown> {
    const { params, ignored } = parse(request, pathOf(request));
    const realm = await request.server.admitSpectator(request);
    const result = await spectator({ params, request, reply, realm, viewer: spectatorViewer(realm.id), ignored });
    return envelope(reply, result, ignored);
  }

  async function run(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const pathValues = pathOf(request);
    if (auth === 'user' && !request.user) throw errors.unauthorized();
    if (spec.allow) spec.allow(request.user!);
    const { params, ignored } = parse(request, pathValues);
    const meta = requestMeta(request);
    const result = await spec.handler({
      params,
      request,
      reply,
      user: request.user!,
      realm: request.realmRow!,
      meta,
      ignored,
    });
    return envelope(reply, result, ignored);
  }
}

/** Who acts, where and when, for the commands a request runs. */
export function requestMeta(request: FastifyRequest): RequestMeta {
  return {
    actorId: request.user?.id ?? null,
    realmId: request.realmRow?.id ?? 1,
    client: clientName(requestedClient(request), request.headers['user-agent']),
    requestId: request.id ?? randomUUID(),
    now: new Date(),
  };
}

/** A `client` parameter, from the query string or the body (a multipart field included). */
function requestedClient(request: FastifyRequest): unknown {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.client;
  if (fromQuery !== undefined) return fromQuery;
  const body = request.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return undefined;
  const value = body.client;
  return value && typeof value === 'object' && 'type' in value ? (value as { value?: unknown }).value : value;
}
