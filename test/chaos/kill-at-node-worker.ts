/**
 * A chaos worker that SIGKILLs itself when a node of superstep KILL_AT_SUPERSTEP starts its first
 * attempt: after the previous step's transition script committed and handed this worker the step's job
 * (eagerly, or fetched with it), before anything of the step runs.
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';

const killAt = Number(process.env.KILL_AT_SUPERSTEP);
const config = loadConfig();
await startWorker({
  config,
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
  observers: [
    {
      onNodeStart(observation) {
        if (observation.superstep === killAt && observation.attempt === 1) process.kill(process.pid, 'SIGKILL');
      },
    },
  ],
});
process.stdout.write('ready\n');
