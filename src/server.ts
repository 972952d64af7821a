import cluster from 'node:cluster';
import { loadConfig } from './config.js';

const config = loadConfig();
// The supervisor loads none of the server's modules: it only forks, watches and stops workers.
if (cluster.isPrimary && config.webConcurrency > 1) {
  const { superviseWorkers } = await import('./cluster/supervisor.js');
  superviseWorkers(config);
} else {
  const { runServer } = await import('./run-server.js');
  await runServer(config);
}
