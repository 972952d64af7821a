import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import { uploadSettingsFromEnv } from './storage/index.js';
import { fileUploads } from './http/file-uploads.js';
import authPlugin from './http/plugins/auth.js';
import errorPlugin from './http/plugins/errors.js';
import rateLimitPlugin from './http/plugins/rate-limit.js';
import methodOverridePlugin, { registerOverrideCarriers } from './http/plugins/method-override.js';
import metricsPlugin from './http/plugins/metrics.js';
import jsonReplyPlugin from './http/plugins/json-reply.js';
import healthRoutes from './http/routes/health.js';
import serverRoutes from './http/routes/server.js';
import userRoutes from './http/routes/users.js';
import eventRoutes from './http/routes/events.js';
import { areaRoutes } from './http/routes/index.js';
import { uploadDownloadRoutes } from './http/routes/attachments.js';
import { invitationConfirmRoutes } from './http/routes/invites.js';
import { avatarDownloadRoutes } from './http/routes/users.js';
import { realmImageDownloadRoutes } from './http/routes/realm-images.js';
import { staticAssetRoutes } from './http/routes/static-assets.js';
import { emojiImageRoutes } from './http/routes/realm-emoji.js';
import { emailConfirmationRoutes } from './http/routes/settings.js';
import { avatarRedirectRoutes, thumbnailRoutes } from './http/routes/redirects.js';
import auditConsole from './audit-console/plugin.js';
import { jsonSurface } from './http/json-surface.js';
import { JSON_PREFIX } from './http/route.js';
import type { AppServices } from './http/services.js';
import type { ParamsSpec } from './http/params.js';
import './event-queue/areas/index.js';

export interface AppOptions {
  services: AppServices;
}

const API_PREFIX = '/api/v1';

export interface RegisteredRoute {
  method: string;
  url: string;
  auth: 'user' | 'none';
  /** Spectators may call it too, under /json (RouteSpec.spectator). */
  spectators: boolean;
  /** The declared parameters (routes made with defineRoute), for the fuzzer and the docs. */
  params?: ParamsSpec;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every API route with its auth requirement (tests walk it for the auth and error matrix). */
    apiRoutes: RegisteredRoute[];
  }
}

/** The whole HTTP API as one plugin: server.ts listens with it, tests inject into it. */
async function app(fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  const patterns: Array<{ pattern: RegExp; method: string; params: number }> = [];
  const routes: RegisteredRoute[] = [];
  fastify.decorate('apiRoutes', routes);
  fastify.addHook('onRoute', (route) => {
    const config = route.config as { auth?: 'user' | 'none' | 'spectator'; spectators?: boolean; params?: ParamsSpec; overrideCarrier?: boolean } | undefined;
    // A carrier of `method` overrides is no method of its path (src/http/plugins/method-override.ts).
    if (config?.overrideCarrier) return;
    // The /json surface repeats some API routes for spectators; the API's paths are the /api/v1 ones.
    if (config?.auth === 'spectator') return;
    // An integer in the path takes digits only, as the real server's <int:...> converters (defineRoute's check).
    const isInteger = (name: string) => (config?.params?.properties[name] as { type?: unknown } | undefined)?.type === 'integer';
    // A trailing `*` (a file's path) is the rest of the path.
    const source = route.url.replace(/:([a-zA-Z_]+)/g, (_, name: string) => (isInteger(name) ? '[0-9]+' : '[^/]+')).replace(/\*$/, '.+');
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      patterns.push({ pattern: new RegExp(`^${source}/?$`), method, params: (route.url.match(/:[a-zA-Z_]+/g) ?? []).length });
      routes.push({ method, url: route.url, auth: config?.auth ?? 'none', spectators: config?.spectators === true, params: config?.params });
    }
  });
  await fastify.register(errorPlugin, { routePatterns: () => patterns, surfaces: { json: JSON_PREFIX, api: API_PREFIX } });
  await fastify.register(jsonReplyPlugin);
  await fastify.register(metricsPlugin, { services: opts.services });
  await fastify.register(healthRoutes, { services: opts.services });
  await fastify.register(formbody, { bodyLimit: 10 * 1024 * 1024 });
  // Files are streamed, buffered (small images) or drained part by part as they arrive
  // (src/http/file-uploads.ts); busboy's own limit is a backstop one byte past the largest upload.
  const maxFileSizeMib = () => uploadSettingsFromEnv().maxFileSizeMib;
  const onFile = fileUploads(fastify, maxFileSizeMib);
  const fileSize = maxFileSizeMib() * 1024 * 1024 + 1;
  await fastify.register(multipart, { attachFieldsToBody: true, onFile, limits: { fileSize, fields: 200, fieldSize: 1024 * 1024 } });
  await fastify.register(authPlugin, { ctx: opts.services.ctx });
  await fastify.register(rateLimitPlugin, { perMinute: opts.services.ctx.config.rateLimitPerMinute });
  await fastify.register(methodOverridePlugin);
  await fastify.register(uploadDownloadRoutes, { services: opts.services });
  await fastify.register(avatarDownloadRoutes, { services: opts.services });
  await fastify.register(realmImageDownloadRoutes, { services: opts.services });
  await fastify.register(staticAssetRoutes);
  await fastify.register(emojiImageRoutes, { services: opts.services });
  await fastify.register(emailConfirmationRoutes, { services: opts.services });
  await fastify.register(invitationConfirmRoutes, { services: opts.services });
  await fastify.register(avatarRedirectRoutes, { services: opts.services });
  await fastify.register(thumbnailRoutes, { services: opts.services });
  // The audit console's HTML pages (docs/AUDIT-CONSOLE.md): cookies and CSRF stay inside its plugin.
  await fastify.register(auditConsole, { services: opts.services, prefix: '/audit' });
  await fastify.register(
    async (api) => {
      await api.register(serverRoutes, { services: opts.services });
      await api.register(userRoutes, { services: opts.services });
      await api.register(eventRoutes, { services: opts.services });
      for (const routes of areaRoutes) await api.register(routes, { services: opts.services });
    },
    { prefix: API_PREFIX },
  );
  await fastify.register(jsonSurface, { services: opts.services, prefix: JSON_PREFIX });
  registerOverrideCarriers(fastify);
}

// Not encapsulated: the root instance gets the error handlers and the route list.
export default fp(app, { name: 'zulip-api' });
