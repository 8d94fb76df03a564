/**
 * A chaos worker serving `callbacker` (test/helpers/callback-graph.ts): the test SIGKILLs it after its
 * step handed out a callback URL and before it parked, and starts another.
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { callbackGraph } from '../helpers/callback-graph.js';

const config = loadConfig();
await startWorker({
  config,
  graphs: [callbackGraph()],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
});
process.stdout.write('ready\n');
