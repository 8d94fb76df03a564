/**
 * A chaos worker serving the two-turns graph whose model calls go through the provider's Batch API. With
 * KILL_AT_POINT set it SIGKILLs itself the first time one of its provider batches reaches that point of
 * its life (provider-batch-flush.ts FlushPoint: after the named provider call, before it is recorded).
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

const killAt = process.env.KILL_AT_POINT;
const config = loadConfig();
await startWorker({
  config,
  graphs: [twoTurnGraph()],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
  onProviderBatchPoint(point) {
    if (point === killAt) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write('ready\n');
