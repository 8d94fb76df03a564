/**
 * What `agentq worker` needs to start a worker, in one module: `npm run build` bundles it, with the
 * modules it imports, into `worker-entry.bundle.js` beside it (scripts/bundle-worker.ts), which the
 * command loads when it is there (worker-command.ts).
 */
export { startWorker } from './start-worker.js';
export { loadConfig } from '../shared/config/config.js';
export { createLogger } from '../shared/telemetry/logger.js';
