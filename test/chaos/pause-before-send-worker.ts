/**
 * A worker process for the paused-worker chaos test: the `model-steps` graph, with a provider
 * rate limiter that stops this very process (SIGSTOP to itself) inside its first slot request — that is,
 * after the step claimed its model call (and reserved its tenant budget) and before the request is sent:
 * the window a paused process would otherwise pay from after it resumes. The test sends SIGCONT.
 */
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { modelStepsGraph } from './workers-killed-graph.js';

let stopped = false;
// A limit for the scripted model, so that every fresh call asks the limiter below for a slot.
const config = loadConfig({ ...process.env, AGENTQ_RATE_LIMITS: 'scripted-chat:100000:0' });
const worker = await startWorker({
  config,
  graphs: [modelStepsGraph],
  logger: createLogger(config.logLevel, { role: 'pause-worker' }),
  services: {
    rateLimiter: {
      acquire: async () => {
        if (!stopped && process.env.STOP_IN_FIRST_CALL === '1') {
          stopped = true;
          process.stdout.write('stopping\n');
          process.kill(process.pid, 'SIGSTOP');
        }
        return { granted: true, ticket: '' };
      },
      settle: async () => undefined,
    },
  },
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
