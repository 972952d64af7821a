import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileUploadSpec } from './file-uploads.js';

/** One method of a path, as defineRoute declared it: what a request dispatched to it must pass, and its handler. */
export interface MethodTarget {
  auth: 'user' | 'none';
  limited: boolean;
  files?: FileUploadSpec;
  run(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

/**
 * The methods of one URL pattern, in the order their routes were declared (the order the real
 * server's rest_path lists them in, which its 405 answer keeps).
 */
export class PathMethods {
  readonly targets = new Map<string, MethodTarget>();

  constructor(readonly url: string) {}

  /** The target a request for `method` runs; HEAD runs GET's, as the real server's rest_dispatch adds it. */
  target(method: string): MethodTarget | undefined {
    return this.targets.get(method) ?? (method === 'HEAD' ? this.targets.get('GET') : undefined);
  }

  allowed(): string[] {
    return withHead([...this.targets.keys()]);
  }
}

/**
 * Every path declared through defineRoute, keyed by its shape: `/users/:user` (GET) and
 * `/users/:user_id` (PATCH) are one path to the router, as to the real server's URL table.
 */
export class MethodTable {
  readonly paths = new Map<string, PathMethods>();

  add(url: string, method: string, target: MethodTarget): PathMethods {
    const shape = url.replace(/:[a-zA-Z_]+/g, ':');
    let path = this.paths.get(shape);
    if (!path) this.paths.set(shape, (path = new PathMethods(url)));
    path.targets.set(method, target);
    return path;
  }
}

/** A path that answers GET answers HEAD too (listed last, as the real server's dispatch adds it). */
export function withHead(methods: readonly string[]): string[] {
  const unique = [...new Set(methods)];
  if (unique.includes('GET') && !unique.includes('HEAD')) unique.push('HEAD');
  return unique;
}

const FORM_BODY = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/**
 * The method a POST asks for with a `method` field in its form body (the real server's "magic
 * method=??? parameter", which clients that cannot send PATCH or DELETE use), or undefined. Only a
 * POST's form body counts: a `method` in the query string, or in a JSON body, is a plain parameter.
 */
export function overrideMethod(request: FastifyRequest): string | undefined {
  if (request.method !== 'POST' || !FORM_BODY.test(request.headers['content-type'] ?? '')) return undefined;
  const body = request.body;
  if (!body || typeof body !== 'object' || !Object.hasOwn(body, 'method')) return undefined;
  let value = (body as Record<string, unknown>).method;
  // A repeated field arrives as a list; the real server's QueryDict answers with the last one.
  if (Array.isArray(value)) value = value[value.length - 1];
  // A multipart field arrives as a part object.
  if (value && typeof value === 'object' && (value as { type?: unknown }).type === 'field') value = (value as { value?: unknown }).value;
  // A file part named `method` is no method: the real server reads it from request.POST only.
  return typeof value === 'string' ? value : undefined;
}
