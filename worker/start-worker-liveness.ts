import type { Config } from '../shared/config/config.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { RedisRunStore } from '../shared/store/redis-run-store.js';
import { INGEST_QUEUE, INTAKE_QUEUE, SCHEDULES_QUEUE, STEP_QUEUE, WEBHOOK_QUEUE } from '../shared/contracts/queues.js';
import { stepQueuePrefix } from '../shared/contracts/shards.js';
import { queueQualifiedName } from '../shared/bullmq/bullmq-keys.js';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import { startLiveness, type Liveness } from './runtime/liveness-thread.js';
import { watchDataPath } from './runtime/data-path-watch.js';

/**
 * A worker process's liveness, beating from a thread of its own: it holds the step jobs' locks and
 * releases a dead peer's, while `dataConnections` (those its steps commit through) answer: when they
 * have not for AGENTQ_STEP_REDIS_TIMEOUT_MS, it stops beating until they do. Waits up to 5 s for the
 * first beat.
 */
export async function startWorkerLiveness(
  config: Config,
  store: RedisRunStore,
  logger: Logger,
  dataConnections: RedisConnection[] = [],
): Promise<Liveness> {
  const stepQueueKeys = Array.from({ length: config.shards }, (_value, shard) =>
    queueQualifiedName(stepQueuePrefix(config.queuePrefix, shard, config.shards), STEP_QUEUE),
  );
  const liveness = startLiveness({
    redis: config,
    alivePrefixes: Array.from({ length: config.shards }, (_value, shard) => store.keys.alivePrefix(shard)),
    intervalMs: config.livenessIntervalMs,
    ttlMs: config.livenessTtlMs,
    lockMs: config.lockDurationMs,
    registryKey: store.keys.livenessRegistry(),
    // Every queue of agentq, whether this process takes from it or not: a dead peer may have.
    reapQueues: [
      ...stepQueueKeys,
      ...[INTAKE_QUEUE, SCHEDULES_QUEUE, WEBHOOK_QUEUE, INGEST_QUEUE].map((name) =>
        queueQualifiedName(config.queuePrefix, name),
      ),
    ],
    heldQueues: stepQueueKeys,
    onReaped: (processId, released) =>
      logger.info({ processId, released }, 'a worker process stopped beating: its job locks are released'),
    onLost: (released) =>
      logger.info({ released }, 'reconnected to Redis: released the step jobs taken as the connection dropped'),
  });
  const watch = watchDataPath({
    connections: dataConnections,
    intervalMs: config.livenessIntervalMs,
    failingAfterMs: config.stepRedisTimeoutMs,
    onChange(failing, failedForMs) {
      liveness.dataPathFailing(failing);
      if (failing)
        logger.warn(
          { failedForMs },
          'Redis has not answered on this worker’s data connections: it stops beating, so its peers take its steps over',
        );
      else logger.info({ failedForMs }, 'Redis answers on this worker’s data connections again: it beats again');
    },
  });
  // Redis answered the checks above; a thread that still cannot write within 5 s is said, not waited for
  // (this process's claims then look dead to others, which is how a worker without liveness behaved).
  const beating = await Promise.race([
    liveness.ready.then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
  ]);
  if (!beating)
    logger.warn(
      'liveness thread has not written its first beat within 5 s; claims on paid work by this worker may be taken over',
    );
  return {
    ...liveness,
    close: () => {
      watch.stop();
      return liveness.close();
    },
  };
}
