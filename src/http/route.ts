import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { errors } from '../domain/errors.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import type { RequestMeta } from '../services/context.js';
import type { FileUploadSpec } from './file-uploads.js';
import { compileParams, parseParams, type CompiledParams, type ParamsSpec } from './params.js';

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
  return fields;
}

/** Registers a route: parameters from query and body, validated, then the handler's success envelope. */
export function defineRoute<P = Record<string, unknown>>(app: FastifyInstance, spec: RouteSpec<P>): void {
  // Compiled on the route's first request: compiling the ~400 routes' validators up front was the
  // largest part of start-up, and most routes of a given server are never called soon after it.
  let compiled: CompiledParams | undefined;
  const pathNames = [...spec.url.matchAll(/:([a-zA-Z_]+)/g)].map((m) => m[1]!);
  // The real server's URL patterns take digits only for an integer in the path: anything else is no route.
  const digitNames = pathNames.filter((name) => (spec.params?.properties?.[name] as { type?: unknown } | undefined)?.type === 'integer');
  app.route({
    method: spec.method,
    url: spec.url,
    config: { auth: spec.auth ?? 'user', limited: spec.rateLimit !== false, params: spec.params, files: spec.files },
    handler: async (request, reply) => {
      for (const name of digitNames) if (!/^[0-9]+$/.test((request.params as Record<string, string>)[name] ?? '')) throw errors.notFound();
      if ((spec.auth ?? 'user') === 'user' && !request.user) throw errors.unauthorized();
      if (spec.allow) spec.allow(request.user!);
      const fields = fieldsOf(request);
      for (const name of pathNames) fields[name] = (request.params as Record<string, string>)[name];
      compiled ??= compileParams(spec.params ?? { properties: {} });
      const { params, ignored } = parseParams<P>(compiled, fields);
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
      if (reply.sent) return reply;
      const body: Record<string, unknown> = { result: 'success', msg: '', ...(result ?? {}) };
      if (ignored.length > 0) body.ignored_parameters_unsupported = ignored;
      return body;
    },
  });
}

/** Who acts, where and when, for the commands a request runs. */
export function requestMeta(request: FastifyRequest): RequestMeta {
  return {
    actorId: request.user?.id ?? null,
    realmId: request.realmRow?.id ?? 1,
    client: clientName(request),
    requestId: request.id ?? randomUUID(),
    now: new Date(),
  };
}

function clientName(request: FastifyRequest): string {
  const agent = request.headers['user-agent'] ?? '';
  const name = /^([^/\s]+)/.exec(agent)?.[1];
  return (name ?? 'API').slice(0, 30);
}
