/** A worker process for the CLI's batch under faults: the built-in graphs and echo-rag, config from the environment. */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';

const config = loadConfig();
const worker = await startWorker({
  config,
  logger: createLogger(config.logLevel, { role: 'echo-rag-worker' }),
  graphs: [echoRagGraph()],
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
