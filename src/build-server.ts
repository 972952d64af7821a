import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Config } from './config.js';
import { createPlatform, type Platform } from './platform.js';
import type { Projection } from './projections-api.js';
import { EventQueueHub } from './event-queue/hub.js';
import { QueueService } from './event-queue/queue-service.js';
import { ensureOrganization, type BootstrapResult } from './services/bootstrap.js';
import app from './app.js';

export interface ServerInstance {
  fastify: FastifyInstance;
  platform: Platform;
  queues: QueueService;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

export interface BuildOptions {
  projections: readonly Projection[];
  inMemory?: boolean;
  logger?: boolean | object;
  writeZuliprc?: boolean;
}

/** Wires storage, workers, the queue hub and the HTTP app; the caller decides whether to listen. */
export async function buildServer(config: Config, options: BuildOptions): Promise<ServerInstance> {
  const platform = await createPlatform(config, { projections: options.projections, inMemory: options.inMemory });
  const hub = new EventQueueHub(platform.db, platform.store);
  hub.start(platform.projections.projectedPosition);
  platform.projections.onProjected((position) => hub.advance(position));
  const queues = new QueueService(platform, hub);
  queues.startSweeper();
  const bootstrap = await ensureOrganization(platform, { writeZuliprc: options.writeZuliprc ?? false });
  const fastify = Fastify({
    logger: options.logger ?? false,
    bodyLimit: 30 * 1024 * 1024,
    requestIdHeader: 'x-request-id',
    // Request ids end up in event metadata: unique across restarts and replicas, unlike fastify's counter.
    genReqId: () => randomUUID(),
    forceCloseConnections: true,
  });
  await fastify.register(app, { services: { ctx: platform, queues } });
  await fastify.ready();
  let closed = false;
  return {
    fastify,
    platform,
    queues,
    bootstrap,
    async close() {
      if (closed) return;
      closed = true;
      queues.stop();
      await fastify.close();
      await platform.close();
    },
  };
}
