import { Worker, type ConnectionOptions, type MinimalJob, type Processor } from 'bullmq';
import type { Config } from '../shared/config/config.js';
import type { StepJobData } from '../shared/contracts/job-schema.js';
import { INTAKE_QUEUE, SCHEDULES_QUEUE } from '../shared/contracts/queues.js';
import type { GraphRegistry } from '../shared/graph/graph-registry.js';
import { backoffDelay, DEFAULT_RETRY_POLICY } from '../shared/graph/retry-policy.js';
import { refuseOversizedJobData } from '../shared/bullmq/oversized-job-data.js';
import type { StepQueues } from '../shared/store/step-queues.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import { warningKind, type WarningGate } from '../shared/telemetry/warning-gate.js';
import { OVERSIZED_JOB_FIELDS, type IntakeProcessor } from './engine/intake-processor.js';
import { ownWorker, type Liveness } from './runtime/liveness-thread.js';
import { splitGraphId } from './engine/step-jobs.js';
import type { StepProcessor } from './engine/step-processor.js';
import type { StepTransitions } from './engine/step-transitions.js';
import { StepWorker } from './engine/step-worker.js';
import type { TurnGate } from './runtime/turn-gate.js';

interface JobWorkersOptions {
  config: Config;
  registry: GraphRegistry;
  connection: ConnectionOptions;
  stepQueues: StepQueues;
  stepProcessor: StepProcessor;
  transitions: StepTransitions;
  intakeProcessor: IntakeProcessor;
  tickProcess: Processor;
  liveness: Liveness;
  startsGate: TurnGate;
  telemetry: Telemetry;
  concurrency: number;
  warnings: WarningGate;
  logger: Logger;
}

/** The BullMQ workers of a worker process: one per step-queue shard, the intake's and the schedule ticks'. */
interface JobWorkers {
  stepWorkers: StepWorker[];
  intakeWorker: Worker;
  scheduleWorker: Worker;
  all: Worker[];
}

/**
 * Makes and starts the queue workers of a worker process (start-worker.ts wires the rest). Every
 * worker's job tokens name this process, so that its peers' liveness threads release its locks when it
 * dies; connection errors are logged through the warning gate (one line per kind per interval).
 */
export function startJobWorkers(options: JobWorkersOptions): JobWorkers {
  const { config, registry, connection, stepQueues, liveness, startsGate, telemetry, concurrency, warnings } = options;
  const bullmqTelemetry = telemetry.bullmq ? { telemetry: telemetry.bullmq } : {};
  const workerOptions = {
    connection,
    prefix: config.queuePrefix,
    ...bullmqTelemetry,
    concurrency,
    lockDuration: config.lockDurationMs,
    stalledInterval: config.stalledIntervalMs,
    maxStalledCount: config.maxStalledCount,
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, _error?: Error, job?: MinimalJob) => {
        const data = job?.data as StepJobData | undefined;
        const [name, version] = splitGraphId(data?.graph ?? '');
        const policy = registry.find(name, version)?.nodes.get(data?.node ?? '')?.retry ?? DEFAULT_RETRY_POLICY;
        return backoffDelay(policy, attemptsMade);
      },
    },
  };
  // Step jobs carry no retention of their own (stepJobOptions): the step workers keep the last N. One
  // StepWorker per shard; the process's concurrency is shared out among them.
  const perShard = Math.max(1, Math.ceil(concurrency / config.shards));
  const stepWorkers = stepQueues.all().map(
    (queue, shard) =>
      new StepWorker(
        shard,
        options.stepProcessor.process,
        options.transitions,
        config.eventsMaxLen,
        {
          ...workerOptions,
          prefix: queue.opts.prefix!,
          concurrency: perShard,
          // BullMQ's own fetch-next gives the take lock too; the liveness thread alone renews step jobs'
          // locks, to the short AGENTQ_LOCK_DURATION_MS (BullMQ's renewal would set them back to 30 s, and
          // a job a live worker lost track of would then wait that long).
          lockDuration: config.takeLockMs,
          skipLockRenewal: true,
          removeOnComplete: { count: config.keepCompletedJobs },
          removeOnFail: { count: config.keepFailedJobs },
        },
        telemetry.enabled
          ? (begin) => (begin?.kind === 'run' ? telemetry.runContext(begin.meta.trace) : undefined)
          : undefined,
        liveness,
        startsGate,
      ),
  );
  for (const worker of stepWorkers) ownWorker(worker, liveness.processId);
  // Intake jobs (admission of new runs) start through the same gate: 10,000 runs arriving at once are
  // admitted a few dozen per turn, not all in one stretch of the event loop.
  const intake = options.intakeProcessor;
  const pacedIntake: typeof intake.process = (job, token) => startsGate.through(() => intake.process(job, token));
  // Data over AGENTQ_MAX_JOB_BYTES is never parsed (the run fails unread), and
  // intake jobs hold the take lock as step jobs do (renewed by BullMQ at half of it): a stretch of
  // admission work on a busy loop does not lose them to the stall check, and a dead process's are
  // released by its peers' liveness threads within seconds, as its step jobs are.
  const intakeWorker = refuseOversizedJobData(
    ownWorker(
      new Worker(INTAKE_QUEUE, pacedIntake, {
        ...workerOptions,
        lockDuration: config.takeLockMs,
        autorun: false,
        concurrency: Math.max(1, Math.ceil(concurrency / 2)),
      }),
      liveness.processId,
    ),
    config.maxJobBytes,
    OVERSIZED_JOB_FIELDS,
  );
  // Schedule ticks: BullMQ's job schedulers add one job per tick; any worker may take it.
  const scheduleWorker = ownWorker(
    new Worker(SCHEDULES_QUEUE, options.tickProcess, { ...workerOptions, autorun: false, concurrency: 2 }),
    liveness.processId,
  );
  const all: Worker[] = [...stepWorkers, intakeWorker, scheduleWorker];
  for (const worker of all) {
    worker.on('error', (error) =>
      warnings.warn(
        warningKind('queue worker error', error),
        { err: error.message },
        'queue worker error (will retry)',
      ),
    );
  }
  for (const worker of all) {
    worker
      .run()
      .catch((error: unknown) => options.logger.error({ err: String(error) }, `${worker.name} worker stopped`));
  }
  return { stepWorkers, intakeWorker, scheduleWorker, all };
}
