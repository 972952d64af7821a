import cluster from 'node:cluster';
import type { Config } from './config.js';
import { buildServer } from './build-server.js';
import { serverLoggerOptions } from './observability/logger.js';
import { allProjections } from '../projections/index.js';

const LISTEN_BACKLOG = 4096;

/**
 * One server process: builds the server, listens, and closes gracefully on SIGINT/SIGTERM. As a
 * worker of src/cluster/supervisor.ts it also closes when the supervisor goes away, and leaves the
 * "listening on" line to the supervisor.
 */
export async function runServer(config: Config): Promise<void> {
  const server = await buildServer(config, {
    projections: allProjections,
    writeZuliprc: true,
    organization: 'full',
    logger: serverLoggerOptions(config.logLevel),
  });
  const log = server.fastify.log;
  if (server.bootstrap.owner?.zuliprcPath) {
    log.info(`created the organization; the owner's credentials are in ${server.bootstrap.owner.zuliprcPath}`);
    console.log(`zuliprc written to ${server.bootstrap.owner.zuliprcPath}`);
  }
  // Long-poll clients reconnect in crowds (after a restart, after an everyone-event): a deep accept
  // queue keeps a burst of connects from being dropped and retried seconds later.
  await server.fastify.listen({ host: config.host, port: config.port, backlog: LISTEN_BACKLOG });
  if (cluster.isPrimary) {
    console.log(
      `listening on ${config.externalUrl} (${server.platform.database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'}, ${server.platform.bus.kind} bus)`,
    );
  }

  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: answering blocked long-polls and shutting down`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
  // A supervisor that died (even by SIGKILL) cannot stop its workers: they stop on their own.
  if (cluster.isWorker) process.on('disconnect', () => stop('the supervisor is gone'));
}
