/**
 * A worker process for the worker-fault scenarios (workers killed, lost writes, graceful shutdown):
 * the built-in graphs and `model-steps`; config, model endpoint included, from the environment. On
 * SIGTERM it shuts down gracefully (active steps finish within AGENTQ_SHUTDOWN_GRACE_MS) and exits 0.
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { modelStepsGraph } from './workers-killed-graph.js';

const config = loadConfig();
const worker = await startWorker({
  config,
  graphs: [modelStepsGraph],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
