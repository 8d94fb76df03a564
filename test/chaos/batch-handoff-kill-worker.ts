/**
 * A chaos worker serving echo-rag that SIGKILLs itself at KILL_AT, on the way from a batch run's end to
 * the batch's next question (once per process; '' never):
 *  - `claimed`: its finish hook's RELEASE freed the run's slot and claimed the next item, before that
 *    item's run exists (what the reconciler's `repair` must start);
 *  - `taken`: the next item's run was created with its start job taken into this worker's slot (active,
 *    locked by this process), before the job runs (what BullMQ's stalled-job check must hand on).
 * Reached through the prototypes of the dispatcher and the enqueuer: no production code knows of it.
 */
import { loadConfig } from '../../shared/config/config.js';
import { BatchDispatcher } from '../../shared/operations/batches/batch-dispatcher.js';
import { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';

const killAt = process.env.KILL_AT ?? '';
const die = () => process.kill(process.pid, 'SIGKILL');

const topUp = BatchDispatcher.prototype.topUp;
BatchDispatcher.prototype.topUp = function (this: BatchDispatcher, ...args: Parameters<typeof topUp>) {
  const [, claimed] = args;
  // Called with RELEASE's claim: the finish hook of a run of this worker, the next item claimed.
  if (killAt === 'claimed' && claimed && claimed[0] >= 0) die();
  return topUp.apply(this, args);
};

const enqueueValid = RunEnqueuer.prototype.enqueueValid;
RunEnqueuer.prototype.enqueueValid = async function (this: RunEnqueuer, ...args: Parameters<typeof enqueueValid>) {
  const enqueued = await enqueueValid.apply(this, args);
  if (killAt === 'taken' && enqueued.taken) die();
  return enqueued;
};

const config = loadConfig();
await startWorker({
  config,
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
  graphs: [echoRagGraph()],
});
process.stdout.write('ready\n');
