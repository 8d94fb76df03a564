/**
 * A process that takes schedule ticks only, with the real ScheduleTickProcessor, and dies (SIGKILL) at
 * its first tick: before processing it (DIE_IN_TICK=before: BullMQ already queued the next tick) or
 * after the run was created but before the tick job completed (DIE_IN_TICK=after).
 */
import { Queue, Worker } from 'bullmq';
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { SCHEDULES_QUEUE } from '../../shared/contracts/queues.js';
import { createRedis } from '../../shared/redis/create-redis.js';
import { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import { Schedules } from '../../shared/operations/schedules/schedules.js';
import { StepQueues } from '../../shared/store/step-queues.js';
import { ScheduleTickProcessor } from '../../worker/operations/schedule-tick-processor.js';

const mode = process.env.DIE_IN_TICK;
if (mode !== 'before' && mode !== 'after') throw new Error('DIE_IN_TICK must be before or after');
const config = loadConfig();
const connection = { url: config.redisUrl!, maxRetriesPerRequest: null };
const redis = createRedis(config.redisUrl, 'worker');
const store = new RedisRunStore(redis, { keyPrefix: config.keyPrefix, shards: config.shards });
const stepQueues = new StepQueues(config.shards, config.queuePrefix, { connection });
const queue = new Queue(SCHEDULES_QUEUE, { connection, prefix: config.queuePrefix });
const processor = new ScheduleTickProcessor({
  schedules: new Schedules({ redis, keys: store.keys, queue }),
  enqueuer: new RunEnqueuer(store, stepQueues, config),
  logger: createLogger(config.logLevel),
});
const die = (): never => {
  process.stdout.write(`dying ${mode}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};
const worker = new Worker(
  SCHEDULES_QUEUE,
  async (job) => {
    if (mode === 'before') die();
    await processor.process(job);
    return die();
  },
  {
    connection,
    prefix: config.queuePrefix,
    lockDuration: config.lockDurationMs,
    stalledInterval: config.stalledIntervalMs,
  },
);
await worker.waitUntilReady();
process.stdout.write('ready\n');
