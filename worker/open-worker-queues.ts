import { Queue } from 'bullmq';
import type { Config } from '../shared/config/config.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import { warningKind, type WarningGate } from '../shared/telemetry/warning-gate.js';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import { bullmqConnection } from '../shared/bullmq/bullmq-connection.js';
import { INTAKE_QUEUE, queueStreamOptions, SCHEDULES_QUEUE } from '../shared/contracts/queues.js';
import { StepQueues } from '../shared/store/step-queues.js';

/**
 * The queues a worker adds to: a step queue per shard (on the step connection), the intake and the
 * schedules queue, with their connection errors said through the warning gate.
 */
export function openWorkerQueues(
  config: Config,
  telemetry: Telemetry,
  stepRedis: RedisConnection,
  warnings: WarningGate,
) {
  const bullmq = bullmqConnection(config, 'worker');
  const connection = bullmq.connection;
  const bullmqTelemetry = telemetry.bullmq ? { telemetry: telemetry.bullmq } : {};
  const queueOptions = {
    connection,
    prefix: config.queuePrefix,
    ...bullmqTelemetry,
    ...queueStreamOptions(config.queueEventsMaxLen),
  };
  // One step queue per shard (AGENTQ_SHARDS), under the shard's prefix: a run's keys share its tag.
  const stepQueues = new StepQueues(config.shards, config.queuePrefix, { ...queueOptions, connection: stepRedis });
  const intakeQueue = new Queue(INTAKE_QUEUE, queueOptions);
  // Schedule ticks: BullMQ's job schedulers add one job per tick; any worker may take it.
  const schedulesQueue = new Queue(SCHEDULES_QUEUE, queueOptions);
  // Without a listener BullMQ prints a queue's connection errors raw on stderr, outside the JSON logs.
  for (const queue of [...stepQueues.all(), intakeQueue, schedulesQueue]) {
    queue.on('error', (error) =>
      warnings.warn(
        warningKind('queue connection error', error),
        { err: error.message },
        'queue connection error (will retry)',
      ),
    );
  }
  return { bullmq, connection, stepQueues, intakeQueue, schedulesQueue };
}
