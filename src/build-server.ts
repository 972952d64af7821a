import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from './config.js';
import { createPlatform, type Platform } from './platform.js';
import type { Projection } from './projections-api.js';
import { EventQueueHub, PREPARE_AHEAD } from './event-queue/hub.js';
import { openDatabase } from './db/database.js';
import { QueueService } from './event-queue/queue-service.js';
import { ensureOrganization, type BootstrapResult, type OrganizationSetup } from './services/bootstrap.js';
import app from './app.js';
import { toApiError } from './http/plugins/errors.js';
import { ScheduledMessageWorker, type SchedulerOptions } from './scheduler/scheduled-message-worker.js';
import { requestIdOf } from './http/plugins/request-id.js';
import { ForgettingJob } from './services/forgetting-job.js';
import { OutgoingWebhookWorker, type OutgoingWebhookWorkerOptions } from './services/outgoing-webhooks/worker.js';
import { FullMembersPromotion } from './scheduler/full-members-promotion.js';
import { logRequests } from './observability/logger.js';

/** How long a request waits for the read tables after a lost database connection before it is tried anyway. */
const READS_READY_WAIT_MS = 3_000;

export interface ServerInstance {
  fastify: FastifyInstance;
  platform: Platform;
  queues: QueueService;
  /** Shreds deleted messages after their grace period and messages past retention (docs/FORGETTING.md). */
  forgetting: ForgettingJob;
  bootstrap: BootstrapResult;
  scheduler: ScheduledMessageWorker;
  /** Calls outgoing webhook bots about the messages that trigger them. */
  outgoingWebhooks: OutgoingWebhookWorker;
  /** Promotes members past the waiting period to role:fullmembers (`runOnce(now)` for tests). */
  fullMembers: FullMembersPromotion;
  close(): Promise<void>;
}

export interface BuildOptions {
  projections: readonly Projection[];
  inMemory?: boolean;
  logger?: boolean | object;
  writeZuliprc?: boolean;
  scheduler?: SchedulerOptions;
  outgoingWebhooks?: OutgoingWebhookWorkerOptions;
  /** What a new organization starts with; `npm start` uses 'full'. Default 'empty'. */
  organization?: OrganizationSetup;
}

/** Wires storage, workers, the queue hub and the HTTP app; the caller decides whether to listen. */
export async function buildServer(config: Config, options: BuildOptions): Promise<ServerInstance> {
  const platform = await createPlatform(config, { projections: options.projections, inMemory: options.inMemory });
  // On PostgreSQL the hub prepares events on connections of its own: under load, delivery to
  // blocked polls must not wait in the pool's queue behind every request (docs/DECISIONS.md).
  const delivery = platform.database.kind === 'postgres' && config.databaseUrl
    ? await openDatabase({ databaseUrl: config.databaseUrl, poolSize: PREPARE_AHEAD })
    : undefined;
  const hub = new EventQueueHub(delivery?.db ?? platform.db, platform.store);
  hub.start(platform.projections.projectedPosition);
  platform.projections.onProjected((position) => hub.advance(position));
  const queues = new QueueService(platform, hub);
  queues.startSweeper();
  const bootstrap = await ensureOrganization(platform, { writeZuliprc: options.writeZuliprc ?? false, setup: options.organization ?? 'empty' });
  const forgetting = new ForgettingJob(platform, platform.database.kind === 'pglite');
  forgetting.start(config.forgettingIntervalSeconds);
  const fastify = Fastify({
    logger: options.logger ?? false,
    // One line per request instead, by path only (src/observability/logger.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 30 * 1024 * 1024,
    // The X-Request-Id header is read (and bounded) by requestIdOf: it ends up in event metadata.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // close() ends idle keep-alive connections but lets active ones finish: the long-polls that
    // queues.stop() has just released still send their answer (a heartbeat) before the socket closes.
    forceCloseConnections: 'idle',
    // Errors the router raises before any route runs (an undecodable URL) get the usual envelope.
    frameworkErrors: (error, _request, reply) => {
      const apiError = toApiError(error);
      // The generic reply type of frameworkErrors is not the plain one; the envelope is the same.
      void (reply as unknown as FastifyReply).status(apiError.status).send({ result: 'error', msg: apiError.message, code: apiError.code });
    },
  });
  let closed = false;
  // While closing, answers end their connection, so close() need not wait for keep-alive timeouts.
  fastify.addHook('onSend', async (_request, reply) => {
    if (closed) void reply.header('connection', 'close');
  });
  // After a lost database connection, requests wait (a bounded time) until the read tables hold again
  // what they held before it: the database may have taken back the last fold passes
  // (ProjectionRunner.readsReady). Health checks answer at once: they report the outage.
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (platform.projections.readsReady || request.url.startsWith('/health/')) return done();
    platform.projections.untilReadsReady(READS_READY_WAIT_MS).then(() => done(), done);
  });
  if (options.logger) logRequests(fastify);
  platform.projections.onStall((report) => fastify.log.warn(report, 'a write was answered before the read tables reached it'));
  // Whoever can write the PostgreSQL tables could otherwise append to the log undetectably (docs/OPERATIONS.md).
  if (platform.database.kind === 'postgres' && !platform.store.signer) {
    fastify.log.warn('log signing is off (no LOG_SIGNING_KEY or LOG_SIGNING_KEY_FILE): verify cannot tell the server\'s appends from anyone else\'s');
  } else if (platform.store.signer) {
    fastify.log.info({ key_id: platform.store.signer.keyId }, 'signing the log');
    platform.store.signer.onFailure = (error, unsignedRanges) =>
      fastify.log.error({ err: error, unsigned_ranges: unsignedRanges }, 'storing log signatures failed; retrying with the next batch (sign-log signs what a stop leaves unsigned)');
  }
  await fastify.register(app, { services: { ctx: platform, queues } });
  await fastify.ready();
  const scheduler = new ScheduledMessageWorker(platform, {
    onError: (error, id) => fastify.log.error({ err: error, scheduled_message_id: id }, 'scheduled message delivery failed; retrying'),
    ...options.scheduler,
  });
  scheduler.start();
  const outgoingWebhooks = new OutgoingWebhookWorker(platform, platform.database.kind === 'pglite', {
    allowPrivateNetworks: config.outgoingWebhooksAllowPrivateNetworks ?? false,
    onError: (error, job) => fastify.log.error({ err: error, outgoing_webhook: job }, 'outgoing webhook delivery failed'),
    ...options.outgoingWebhooks,
  });
  // Triggers this process folds are delivered at once; the worker's own timer finds the others.
  platform.projections.onProjected(() => outgoingWebhooks.kick());
  outgoingWebhooks.start();
  const fullMembers = new FullMembersPromotion(platform, {
    onError: (error, realmId) => fastify.log.error({ err: error, realm_id: realmId }, 'promoting new full members failed; retrying next pass'),
  });
  fullMembers.start(config.fullMembersIntervalSeconds);
  return {
    fastify,
    platform,
    queues,
    bootstrap,
    scheduler,
    forgetting,
    outgoingWebhooks,
    fullMembers,
    async close() {
      if (closed) return;
      closed = true;
      await scheduler.stop();
      await outgoingWebhooks.stop();
      await fullMembers.stop();
      queues.stop();
      await forgetting.stop();
      await fastify.close();
      await queues.flushCursors().catch(() => undefined);
      await platform.close();
      await delivery?.close();
    },
  };
}
