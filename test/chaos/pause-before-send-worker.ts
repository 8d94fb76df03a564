/**
 * A worker process for the paused-worker chaos test (issue 34): the `model-steps` graph, with a tenant
 * budget service that stops this very process (SIGSTOP to itself) inside its first reservation — that is,
 * after the step claimed its model call and before the request is sent: the window a paused process
 * would otherwise pay from after it resumes. The test sends SIGCONT.
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { modelStepsGraph } from './workers-killed-graph.js';

let stopped = false;
const config = loadConfig();
const worker = await startWorker({
  config,
  graphs: [modelStepsGraph],
  logger: createLogger(config.logLevel, { role: 'pause-worker' }),
  services: {
    tenantBudget: {
      reserve: async (tenant) => {
        if (!stopped && process.env.STOP_IN_FIRST_CALL === '1') {
          stopped = true;
          process.stdout.write('stopping\n');
          process.kill(process.pid, 'SIGSTOP');
        }
        return { tenant, member: 'none' };
      },
      settle: async () => true,
      release: async () => undefined,
    },
  },
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
