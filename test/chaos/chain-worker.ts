/** A worker process for chaos tests: the built-in graphs, config from the environment. */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';

const config = loadConfig();
const worker = await startWorker({ config, logger: createLogger(config.logLevel, { role: 'chaos-worker' }) });
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
