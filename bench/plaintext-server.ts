/**
 * BENCHMARK ONLY: the server with encryption of new events switched off, the floor bench/forgetting.ts
 * measures sends with encryption on against. Not a setting: production has no way to write
 * plaintext (src/platform.ts always opens the event crypto), and this file is neither part of the
 * build (`npm run build` compiles src/, projections/, migrations/) nor imported by anything in src/.
 * bench/forgetting.ts bundles it the way the build bundles src/server.ts, beside it under dist/,
 * and runs it as its own process on a throwaway database; do not run it on a database you keep.
 *
 * Same environment as `npm start` (one process: no WEB_CONCURRENCY); prints "listening on" once ready.
 */
import { loadConfig } from '../src/config.js';
import { buildServer } from '../src/build-server.js';
import { serverLoggerOptions } from '../src/observability/logger.js';
import { allProjections } from '../projections/index.js';

const config = loadConfig();
const server = await buildServer(config, { projections: allProjections, writeZuliprc: true, organization: 'full', logger: serverLoggerOptions(config.logLevel) });
// After the organization's set-up (sealed like any server's): from here on events are stored as written.
server.platform.store.crypto = undefined;
await server.fastify.listen({ host: config.host, port: config.port });
console.log(`listening on ${config.externalUrl} (PLAINTEXT, benchmark only)`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0), () => process.exit(1)));
}
